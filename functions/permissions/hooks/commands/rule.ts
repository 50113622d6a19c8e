import type { Invocation } from '../scope'

/** Classifies one command: flags what it does (inv.flag), allows it (inv.allow), or hands on what it runs (inv.run). */
export type Rule = (inv: Invocation) => void
