import { ApiError } from '../../lib/http/errors'
import type { Scan } from './scan/object'

/** 400 with the scan that blocked the skill (create and install). */
export const skillBlocked = (scan: Scan) => new ApiError('SKILL_BLOCKED', { extra: { scan } })

/** Spec 2 "Skills": install's 500 carries the exact code `install_failed` as its `error`; `message` says it in words. */
export const installFailed = () => new ApiError('INSTALL_FAILED', 'The skill could not be installed; nothing changed. Try again.')

export const duplicateName = () => new ApiError('SKILL_NAME_TAKEN')
