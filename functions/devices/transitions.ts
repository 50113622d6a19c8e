import { ApiError } from '../../lib/http/errors'
import type { DeviceStatus } from './schemas'

export const DEVICE_ACTIONS = ['approve', 'deny', 'revoke'] as const
export type DeviceAction = (typeof DEVICE_ACTIONS)[number]

/**
 * The spec's state table for `POST /api/devices`: each action moves exactly one status to another.
 * Every other (action, status) pair is refused with `refusal`; denied and revoked are final.
 */
export const TRANSITIONS: Record<DeviceAction, { from: DeviceStatus; to: DeviceStatus; refusal: string }> = {
  approve: { from: 'pending', to: 'approved', refusal: 'Device is not pending' },
  deny: { from: 'pending', to: 'denied', refusal: 'Device is not pending' },
  revoke: { from: 'approved', to: 'revoked', refusal: 'Device is not approved' },
}

// Someone else's device answers exactly like an unknown one, so ids reveal nothing.
export const deviceNotFound = () => new ApiError('NOT_FOUND', 'Device not found')
