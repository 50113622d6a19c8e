// Reading a command's options the way getopt-style programs do, enough for the rules: which flags are set,
// which words are operands, what an option's value is. Arguments known only at run time count as operands.
import type { Arg } from '../scope'

const isOption = (a: Arg) => a.value !== undefined && a.value.length > 1 && a.value.startsWith('-') && a.value !== '--'

/** `valued`: options that take the next argument (`-o`, `--output`); `--` ends the options. */
export interface OptionSpec {
  valued?: readonly string[]
}

/** The operands: arguments that are not options nor option values. */
export function operands(args: Arg[], spec: OptionSpec = {}): Arg[] {
  const out: Arg[] = []
  for (let i = 0; i < args.length; i++) {
    const a = args[i]
    if (a.value === '--') return out.concat(args.slice(i + 1))
    if (!isOption(a)) out.push(a)
    else if (takesValue(a.value as string, spec)) i++
  }
  return out
}

export function takesValue(opt: string, spec: OptionSpec): boolean {
  const valued = spec.valued ?? []
  if (opt.startsWith('--')) return !opt.includes('=') && valued.includes(opt)
  const letters = clusterLetters(opt, spec)
  return letters.length === opt.length - 1 && valued.includes(`-${letters[letters.length - 1]}`)
}

/** The option letters of a short cluster, up to and including the first that takes a value (the rest is that value). */
function clusterLetters(opt: string, spec: OptionSpec): string {
  const valued = spec.valued ?? []
  for (let k = 1; k < opt.length; k++) if (valued.includes(`-${opt[k]}`)) return opt.slice(1, k + 1)
  return opt.slice(1)
}

/** Whether a flag is set: a letter in a short cluster (`-rf` has r and f) or a long option, before `--`. */
export function hasFlag(args: Arg[], letters: string, longs: readonly string[] = [], spec: OptionSpec = {}): boolean {
  for (let i = 0; i < args.length; i++) {
    const v = args[i].value
    if (v === '--') return false
    if (v === undefined || !isOption(args[i])) continue
    if (v.startsWith('--')) {
      if (longs.includes(v.split('=')[0])) return true
    } else if ([...clusterLetters(v, spec)].some((c) => letters.includes(c))) return true
    if (takesValue(v, spec)) i++
  }
  return false
}

/** The values of an option: `-o X`, `-oX`, `--output X`, `--output=X` (all occurrences, before `--`). */
export function optionValues(args: Arg[], names: readonly string[]): Arg[] {
  const out: Arg[] = []
  for (let i = 0; i < args.length; i++) {
    const v = args[i].value
    if (v === '--') break
    if (v === undefined) continue
    for (const name of names) {
      if (v === name && args[i + 1]) out.push(args[++i])
      else if (name.startsWith('--') && v.startsWith(`${name}=`)) out.push(slice(args[i], name.length + 1))
      else if (!name.startsWith('--') && v.startsWith(name) && v.length > name.length && !v.startsWith('--')) out.push(slice(args[i], name.length))
      else continue
      break
    }
  }
  return out
}

/** The rest of an argument after `n` characters (an attached option value). */
function slice(a: Arg, n: number): Arg {
  return { ...a, value: a.value?.slice(n), shape: a.shape.slice(n) }
}

/** The values of the arguments, or undefined when one is known only at run time. */
export function values(args: Arg[]): string[] | undefined {
  const out = args.map((a) => a.value)
  return out.every((v) => v !== undefined) ? (out as string[]) : undefined
}
