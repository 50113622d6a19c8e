// The shell side of the classifier: parses a command as Bash does (unbash) and walks every part that runs:
// simple commands anywhere (lists, pipelines, subshells, `$()`, backticks, `<()`, here-documents, functions,
// loops, conditionals, arithmetic), their redirections, the variables they read and the strings they hand to
// another shell. Each simple command goes to its rule (functions/permissions/hooks/commands); the strictest tier met wins.
import { forEachChild, parse, type Assignment, type Command, type Function as FunctionNode, type ParsedScript, type Redirection, type SyntaxNode, type Word } from 'unbash'
import { ARITHMETIC_TESTS, arithmeticRisk, arithmeticText, flagArithmetic, parameterOperations, subscriptRisk, textRisk } from './arithmetic'
import { classifyInvocation } from './commands'
import { checkRead, checkWrite } from './effects'
import { programName } from './paths'
import { childScope, LIMITS, NO_INPUT, TooComplex, UNKNOWN, Verdict, type Arg, type Invocation, type Scope, type Stream } from './scope'
import { outputOf } from './streams'
import { CODE_VARIABLES, riskyVariable, secretVariable } from './variables'
import { quote, type ToolClassification, type ToolTier } from './verdict'
import { assignedValue, expandAssignment, expandWord } from './words'

/** Classifies one shell command line (or script). */
export function classifyShellCommand(command: string): ToolClassification {
  if (command.length > LIMITS.commandChars) return { tier: 'dangerous', reason: `Command longer than ${LIMITS.commandChars} characters: not parsed` }
  if (substitutions(command) > LIMITS.substitutions) return { tier: 'dangerous', reason: `More than ${LIMITS.substitutions} substitutions: not parsed` }
  const verdict = new Verdict()
  const scope: Scope = { verdict, depth: 0, cwd: '.', vars: new Map(), functions: new Map() }
  try {
    runText(command, scope)
  } catch (err) {
    // Fail closed: a bound crossed, or anything unexpected, is never allowed silently.
    verdict.flag('dangerous', err instanceof TooComplex ? `Too complex to classify (${err.message})` : 'Could not be classified')
  }
  return verdict.result()
}

function substitutions(text: string): number {
  let n = 0
  for (let i = 0; i < text.length; i++) if (text[i] === '`' || (text[i] === '(' && (text[i - 1] === '$' || text[i - 1] === '<' || text[i - 1] === '>'))) n++
  return n
}

function runText(text: string, scope: Scope) {
  scope.verdict.parsedChars += text.length
  if (scope.verdict.parsedChars > LIMITS.parsedChars) throw new TooComplex('too much text')
  visit(parse(text), scope)
}

/**
 * A string run as a script one level deeper: in a child shell (`bash -c`, piped into `sh`), or in this one
 * (`eval`, `source`: its `cd` and variables carry on). Beyond the depth bound it is dangerous unread.
 */
function runNested(text: string, scope: Scope, sameShell: boolean) {
  if (scope.depth >= LIMITS.depth) return scope.verdict.flag('dangerous', `Runs scripts nested more than ${LIMITS.depth} deep`)
  const inner = sameShell ? { ...scope, depth: scope.depth + 1 } : { ...childScope(scope), depth: scope.depth + 1 }
  runText(text, inner)
  if (sameShell) scope.cwd = inner.cwd
}

function step(scope: Scope) {
  if (++scope.verdict.steps > LIMITS.steps) throw new TooComplex('too many parts')
}

function visit(node: SyntaxNode, scope: Scope): void {
  step(scope)
  switch (node.type) {
    case 'Script':
      if (node.errors?.length) scope.verdict.flag('dangerous', `Cannot be parsed (${quote(node.errors[0].message)})`)
      break
    case 'Pipeline':
      return visitPipeline(node.commands, scope)
    case 'Command':
      return void visitCommand(node, scope, NO_INPUT)
    case 'Subshell':
    case 'Coproc':
      return visit(node.body, childScope(scope))
    case 'Function':
      return visitFunction(node, scope)
    case 'Redirected':
      visit(node.command, scope)
      for (const r of node.redirects) visitRedirect(r, scope)
      return
    case 'CommandExpansion':
    case 'ProcessSubstitution':
    case 'ArithmeticCommandExpansion':
      if (!node.script) return scope.verdict.flag('dangerous', `Substitution cannot be parsed (${quote(node.text)})`)
      return visit(node.script, childScope(scope))
    case 'SimpleExpansion':
      return readVariable(node.text.slice(1), undefined, scope)
    case 'ParameterExpansion':
      readVariable(node.parameter, node.prefix, scope)
      parameterOperations(node, scope)
      break
    case 'ArithmeticExpansion':
    case 'ArithmeticCommand':
      flagArithmetic(arithmeticRisk(node.expression, scope), scope)
      break
    case 'ArithmeticFor':
      for (const e of [node.initialize, node.test, node.update]) if (e) flagArithmetic(arithmeticRisk(e, scope), scope)
      break
    case 'TestBinary':
      if (ARITHMETIC_TESTS.has(node.operator)) for (const w of [node.left, node.right]) flagArithmetic(textRisk(arithmeticText(w), scope), scope)
      break
    case 'TestUnary':
      if (node.operator === '-v') flagArithmetic(node.operand.parts?.some((p) => p.type !== 'Literal' && p.type !== 'SingleQuoted') ? 'tests a variable named at run time' : subscriptRisk(node.operand.value), scope)
      break
    case 'For':
    case 'Select':
      scope.vars.set(node.name.value, null)
      break
  }
  forEachChild(node, (child) => visit(child, scope))
}

function readVariable(name: string, prefix: '!' | '#' | undefined, scope: Scope) {
  if (prefix === '!') scope.verdict.flag('dangerous', `Indirect expansion reads a variable named at run time (\${!${quote(name, 32)}})`)
  else if (secretVariable(name)) scope.verdict.flag('dangerous', `Reads a secret variable ($${quote(name, 32)})`)
}

/** Stages run in subshells, each reading what the previous one prints. */
function visitPipeline(stages: readonly SyntaxNode[], scope: Scope) {
  if (stages.length === 1) return void visitStage(stages[0], scope, NO_INPUT)
  let input: Stream = NO_INPUT
  for (const stage of stages) input = visitStage(stage, childScope(scope), input)
}

function visitStage(node: SyntaxNode, scope: Scope, input: Stream): Stream {
  if (node.type === 'Command') return visitCommand(node, scope, input)
  visit(node, scope)
  return UNKNOWN
}

/** A function's body is classified where it is defined; a fork bomb (calling itself in the background or a pipe) is destructive. */
function visitFunction(fn: FunctionNode, scope: Scope) {
  const name = fn.name.value
  const inner = childScope(scope)
  inner.functions.set(name, false)
  visit(fn.body, inner)
  // Calling a function that changes directory leaves the working directory unknown.
  scope.functions.set(name, inner.cwd !== scope.cwd)
  if (callsItselfInParallel(fn.body, name, false)) scope.verdict.flag('destructive', `Fork bomb (${quote(name, 24)} calls itself in parallel)`)
}

function callsItselfInParallel(node: SyntaxNode, name: string, parallel: boolean): boolean {
  if (node.type === 'Command') return parallel && node.name?.value === name
  const here = parallel || (node.type === 'Pipeline' && node.commands.length > 1) || (node.type === 'Statement' && !!node.background)
  let found = false
  forEachChild(node, (child) => {
    if (!found && child.type !== 'Word') found = callsItselfInParallel(child, name, here)
  })
  return found
}

function visitCommand(cmd: Command, scope: Scope, input: Stream): Stream {
  let stdin = input
  for (const item of cmd.prefix) if (item.type === 'Assignment') visitAssignment(item, scope, !cmd.name)
  for (const r of cmd.redirects) stdin = visitRedirect(r, scope) ?? stdin
  if (!cmd.name) return UNKNOWN
  visit(cmd.name, scope)
  for (const item of cmd.suffix) if (item.type === 'Word' || item.type === 'Assignment') visit(item, scope)
  const argv = commandArgv(cmd, scope)
  if (!argv?.length || argv[0].expanded || argv[0].glob)
    scope.verdict.flag('dangerous', `Command name known only at run time (${quote(cmd.name.text)})`)
  if (!argv?.length || argv[0].value === undefined) return UNKNOWN
  return runArgv(argv, scope, stdin)
}

function commandArgv(cmd: Command, scope: Scope): Arg[] | undefined {
  if (!cmd.name) return undefined
  const argv = expandWord(cmd.name, scope, scriptOutput)
  for (const item of cmd.suffix) {
    if (item.type === 'Word') argv.push(...expandWord(item, scope, scriptOutput))
    else if (item.type === 'Assignment') argv.push(expandAssignment(item, scope, scriptOutput))
  }
  return argv
}

/** `NAME=value`: records what the script stores (standalone only), flags variables that change what runs. */
function visitAssignment(a: Assignment, scope: Scope, standalone: boolean) {
  visit(a, scope)
  if (a.index && !/^[@*]$/.test(a.index.value)) flagArithmetic(textRisk(a.index.text, scope), scope)
  const value = a.value.type === 'Word' && !a.index ? assignedValue(a.value, scope, scriptOutput).value : undefined
  // A pager or editor variable is as safe as the command line it holds (`GIT_PAGER=cat`); others change what runs.
  if (CODE_VARIABLES.has(a.name)) {
    if (value) runNested(value, scope, false)
    else if (value === undefined) scope.verdict.flag('dangerous', `Sets ${quote(a.name, 32)} to a command known only at run time`)
  } else if (riskyVariable(a.name)) scope.verdict.flag('dangerous', `Sets ${quote(a.name, 32)}, which changes what runs`)
  if (standalone) scope.vars.set(a.name, a.append ? null : (value ?? null))
}

/** Classifies a redirection; answers what it feeds the command's standard input, if it does. */
function visitRedirect(r: Redirection, scope: Scope): Stream | undefined {
  forEachChild(r, (child) => visit(child, scope))
  const fd = r.descriptor?.type === 'FileDescriptor' ? r.descriptor.value : r.descriptor ? -1 : undefined
  const feedsStdin = fd === undefined || fd === 0
  if (r.type === 'HereDoc') return feedsStdin ? hereDocument(r) : undefined
  if (!r.target) return undefined
  const targets = expandWord(r.target, scope, scriptOutput)
  if (r.type === 'HereString') {
    if (!feedsStdin) return undefined
    const text = targets.map((t) => t.value)
    const joined = text.every((t) => t !== undefined) ? `${text.join(' ')}\n` : undefined
    return joined !== undefined && joined.length <= LIMITS.valueChars ? { kind: 'text', text: joined } : UNKNOWN
  }
  const flag = (tier: ToolTier, why: string) => scope.verdict.flag(tier, `Redirection ${why}`)
  if (targets.length !== 1) {
    flag('dangerous', `to a path known only at run time (${quote(r.target.text)})`)
    return undefined
  }
  const [target] = targets
  const dup = target.value !== undefined && /^(\d+-?|-)$/.test(target.value)
  switch (r.operator) {
    case '<':
      checkRead(target, scope, flag)
      return feedsStdin ? (target.process ? scriptStream(target.process, scope) : UNKNOWN) : undefined
    case '<&':
      if (!dup) checkRead(target, scope, flag)
      return undefined
    case '>&':
      if (!dup) checkWrite(target, scope, flag)
      return undefined
    case '<>':
      checkRead(target, scope, flag)
      checkWrite(target, scope, flag)
      return feedsStdin ? UNKNOWN : undefined
    default:
      checkWrite(target, scope, flag)
      return undefined
  }
}

function hereDocument(r: Extract<Redirection, { type: 'HereDoc' }>): Stream {
  const parts = r.body.parts
  if (!parts) return { kind: 'text', text: r.body.text }
  return parts.every((p) => p.type === 'Literal') ? { kind: 'text', text: parts.map((p) => p.value).join('') } : UNKNOWN
}

/** Runs one simple command (already expanded) through its rule; answers what it prints. */
function runArgv(argv: Arg[], scope: Scope, stdin: Stream): Stream {
  step(scope)
  const raw = argv[0].value as string
  const name = programName(raw)
  if (name === undefined) {
    scope.verdict.flag('dangerous', `Runs a program by path (${quote(raw)})`)
    return UNKNOWN
  }
  const args = argv.slice(1)
  // Safe is earned: a command is safe only when its rule allows it; a rule that neither allows nor flags fails closed.
  let decided = false
  const inv: Invocation = {
    name,
    args,
    stdin,
    scope,
    flag: (tier, why, decisive) => {
      decided = true
      scope.verdict.flag(tier, `${quote(name, 24)}: ${why}`, decisive)
    },
    allow: () => {
      decided = true
      scope.verdict.allowed.add(name)
    },
    run: (inner, input = UNKNOWN) => {
      if (!inner.length || inner[0].value === undefined || inner[0].expanded) scope.verdict.flag('dangerous', `${quote(name, 24)}: runs a command known only at run time`)
      else runArgv(inner, scope, input)
    },
    runScript: (text, sameShell = false) => runNested(text, scope, sameShell),
    streamOf: (script) => scriptStream(script, scope),
  }
  classifyInvocation(inv)
  if (!decided) inv.flag('dangerous', 'not known to be harmless')
  return outputOf(name, args, stdin)
}

/** What a `$(…)` prints when it is known: a single command or pipeline of echo/printf/base64 -d… */
function scriptOutput(script: ParsedScript, scope: Scope): string | undefined {
  const out = scriptStream(script, scope)
  return out.kind === 'text' ? out.text : undefined
}

function scriptStream(script: ParsedScript, scope: Scope): Stream {
  const known = scope.verdict.outputs.get(script)
  if (known) return known
  const out = computeStream(script, scope)
  scope.verdict.outputs.set(script, out)
  return out
}

function computeStream(script: ParsedScript, scope: Scope): Stream {
  if (script.errors?.length || script.commands.length !== 1 || script.commands[0].background) return UNKNOWN
  const node = script.commands[0].command
  const stages = node.type === 'Command' ? [node] : node.type === 'Pipeline' && !node.prefixes.length ? node.commands : []
  let out: Stream = stages.length ? NO_INPUT : UNKNOWN
  for (const stage of stages) {
    step(scope)
    if (stage.type !== 'Command') return UNKNOWN
    const argv = commandArgv(stage, scope)
    if (!argv?.length || argv[0].value === undefined) return UNKNOWN
    const name = programName(argv[0].value)
    if (!name) return UNKNOWN
    let stdin = out
    for (const r of stage.redirects) if (r.type === 'HereDoc' && !r.descriptor) stdin = hereDocument(r)
    out = outputOf(name, argv.slice(1), stdin)
  }
  return out
}
