// Bash evaluates arithmetic recursively: a variable's value is itself an expression, and an array subscript in it is
// expanded again, so `x='a[$(rm -rf ~)]'; echo $((x))` runs rm. The value can come from an earlier tool call
// (`export x=…` is an ordinary assignment) or a file (`read x < f`). Arithmetic (`$(( ))`, `(( ))`, `let`,
// `[[ -eq ]]`, `declare -i`, subscripts and `${x:offset}`) is therefore safe only on what the classifier can read:
// numbers, special numeric variables, and variables the script set to such values.
import { parse, type ArithmeticExpression, type SyntaxNode, type Word, type WordPart } from 'unbash'
import { LIMITS, TooComplex, type Scope } from './scope'
import { quote } from './verdict'

// Variables bash itself keeps numeric.
const NUMERIC_SPECIALS = new Set([
  'RANDOM', 'SRANDOM', 'SECONDS', 'LINENO', 'BASHPID', 'PPID', 'UID', 'EUID', 'EPOCHSECONDS', 'COLUMNS', 'LINES', 'OPTIND',
  'HISTCMD', 'SHLVL', 'BASH_SUBSHELL', '#', '?', '$', '!',
])
const NUMBER = /^(0[xX][0-9a-fA-F]+|\d+#[0-9a-zA-Z@_]+|\d+)$/
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/
const MAX_DEPTH = 8

/** Why evaluating this expression could run something the classifier cannot see, or undefined. */
export function arithmeticRisk(expr: ArithmeticExpression | undefined, scope: Scope, depth = 0): string | undefined {
  if (!expr) return 'evaluates an expression it cannot read'
  switch (expr.type) {
    case 'ArithmeticBinary': {
      // `i=0` reads only its right side; `i+=2` reads i too. Either way i holds a number from here on.
      const assigns = /^([-+*/%&|^]|<<|>>)?=$/.test(expr.operator) && expr.left.type === 'ArithmeticWord' && IDENTIFIER.test(expr.left.value)
      const risk = (assigns && expr.operator === '=' ? undefined : arithmeticRisk(expr.left, scope, depth)) ?? arithmeticRisk(expr.right, scope, depth)
      if (!risk && assigns) scope.vars.set((expr.left as { value: string }).value, '0')
      return risk
    }
    case 'ArithmeticUnary':
      return arithmeticRisk(expr.operand, scope, depth)
    case 'ArithmeticTernary':
      return arithmeticRisk(expr.test, scope, depth) ?? arithmeticRisk(expr.consequent, scope, depth) ?? arithmeticRisk(expr.alternate, scope, depth)
    case 'ArithmeticGroup':
      return arithmeticRisk(expr.expression, scope, depth)
    case 'ArithmeticCommandExpansion':
      return 'evaluates the output of a command as arithmetic'
    case 'ArithmeticWord':
      return wordRisk(expr, scope, depth)
  }
}

function wordRisk(word: Extract<ArithmeticExpression, { type: 'ArithmeticWord' }>, scope: Scope, depth: number): string | undefined {
  const v = word.value
  if (word.parts?.some((p) => p.type !== 'Literal')) {
    // `$x`, `${x}`, `"$x"`, `$(cmd)`: substituted first, then evaluated.
    const parts: readonly WordPart[] = word.parts.flatMap((p): readonly WordPart[] => (p.type === 'DoubleQuoted' ? p.parts : [p]))
    for (const p of parts) {
      if (p.type === 'Literal') continue
      if (p.type === 'SimpleExpansion' || (p.type === 'ParameterExpansion' && !p.prefix && !p.operation && !p.index)) {
        const risk = variableRisk(p.type === 'SimpleExpansion' ? p.text.slice(1) : p.parameter, scope, depth)
        if (risk) return risk
      } else return 'evaluates a value known only at run time as arithmetic'
    }
    return v.includes('[') ? 'evaluates an array subscript (it can run commands)' : undefined
  }
  if (NUMBER.test(v)) return undefined
  if (IDENTIFIER.test(v)) return variableRisk(v, scope, depth)
  const simple = /^\$([A-Za-z_][A-Za-z0-9_]*|\d|[#?$!])$/.exec(v)
  if (simple) return variableRisk(simple[1], scope, depth)
  return v.includes('[') ? 'evaluates an array subscript (it can run commands)' : 'evaluates an expression it cannot read'
}

/** A variable read in arithmetic: its value is evaluated in turn. */
export function variableRisk(name: string, scope: Scope, depth = 0): string | undefined {
  if (NUMERIC_SPECIALS.has(name) || /^\d$/.test(name)) return /^\d$/.test(name) ? `evaluates $${name} as arithmetic (its value is known only at run time)` : undefined
  const known = scope.vars.get(name)
  if (typeof known !== 'string') return `evaluates $${name} as arithmetic (its value is known only at run time)`
  if (known === '' || NUMBER.test(known.trim())) return undefined
  return textRisk(known, scope, depth + 1)
}

/** Arithmetic given as text (`let` arguments, a variable's value, a `[[ -eq ]]` operand). */
export function textRisk(text: string, scope: Scope, depth = 0): string | undefined {
  if (NUMBER.test(text.trim())) return undefined
  if (depth > MAX_DEPTH) return 'evaluates arithmetic nested too deep'
  scope.verdict.parsedChars += text.length
  if (scope.verdict.parsedChars > LIMITS.parsedChars) throw new TooComplex('too much text')
  const script = parse(`((${text}))`)
  const node = script.commands[0]?.command
  if (script.errors?.length || script.commands.length !== 1 || node?.type !== 'ArithmeticCommand') return 'evaluates an expression it cannot read'
  return arithmeticRisk(node.expression, scope, depth)
}

/** A variable name with a subscript (`read 'a[$(id)]'`, `unset`, `printf -v`, `[[ -v ]]`): the subscript is evaluated. */
export function subscriptRisk(name: string): string | undefined {
  const open = name.indexOf('[')
  if (open < 0) return undefined
  const inner = name.slice(open + 1, name.endsWith(']') ? -1 : undefined)
  return /^(\d*|@|\*)$/.test(inner) ? undefined : 'evaluates an array subscript (it can run commands)'
}

/** `[[ a -eq b ]]` and friends: both operands are evaluated as arithmetic. */
export const ARITHMETIC_TESTS = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge'])

/** Flags the script when an arithmetic evaluation is risky. */
export function flagArithmetic(risk: string | undefined, scope: Scope) {
  if (risk) scope.verdict.flag('dangerous', `Arithmetic ${risk}`)
}

/** A `[[ -eq ]]` operand as arithmetic text: double quotes do not stop the evaluation. */
export function arithmeticText(word: Word): string {
  if (!word.parts) return word.value
  return word.text.replace(/^"([^"]*)"$/, '$1')
}

/** `${x@P}` runs the substitutions in x's value; subscripts and `${x:offset:length}` are arithmetic. */
export function parameterOperations(node: Extract<SyntaxNode, { type: 'ParameterExpansion' }>, scope: Scope) {
  const op = node.operation
  if (op?.type === 'Transform' && /P/.test(op.operand.value)) scope.verdict.flag('dangerous', `Expands $${quote(node.parameter, 24)} as a prompt string (runs the commands in its value)`)
  if (node.index && !/^[@*]$/.test(node.index.value)) flagArithmetic(textRisk(node.index.text, scope), scope)
  if (op?.type === 'Slice') for (const w of [op.offset, op.length]) if (w) flagArithmetic(textRisk(w.text, scope), scope)
}
