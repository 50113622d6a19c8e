// The rule of every command the classifier knows. A command not named here is dangerous ("unknown command"):
// the safe tier is an allowlist.
import type { Invocation } from '../scope'
import { basicRules } from './basic'
import { builtinRules } from './builtins'
import { destructiveRules } from './destructive'
import { devRules } from './dev'
import { fileRules } from './files'
import { gitRules } from './git'
import { networkRules } from './network'
import type { Rule } from './rule'
import { shellRules } from './shells'
import { textRules } from './text'
import { wrapperRules } from './wrappers'

const RULES = new Map<string, Rule>(
  Object.entries({ ...basicRules, ...builtinRules, ...fileRules, ...textRules, ...destructiveRules, ...networkRules, ...gitRules, ...devRules, ...shellRules, ...wrapperRules }),
)

/** Classifies one simple command: its rule, a function the script defined, or unknown. */
export function classifyInvocation(inv: Invocation) {
  const rule = RULES.get(inv.name) ?? (inv.name.startsWith('mkfs.') ? RULES.get('mkfs') : undefined)
  const changesDirectory = inv.scope.functions.get(inv.name)
  if (changesDirectory !== undefined) {
    if (changesDirectory) inv.scope.cwd = null
    // The function's body was classified where it was defined; a function named like a command is judged as both.
    if (!rule) return inv.allow()
  }
  if (!rule) return inv.flag('dangerous', 'unknown command')
  rule(inv)
}
