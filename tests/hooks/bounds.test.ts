import { describe, expect, it } from 'vitest'
import { classifyToolCall } from '../../functions/permissions/hooks/classify'

// Inputs built to make a parser or a classifier slow or huge, each just under the 10 000-character bound.
const fit = (unit: string, head = '', tail = '') => head + unit.repeat(Math.floor((9_900 - head.length - tail.length) / unit.length)) + tail
const adversarial: Record<string, string> = {
  braces: fit('{a,b}', 'echo '),
  nestedBraces: fit('{a,{b,{c,d}}}', 'echo '),
  hugeSequence: 'echo {1..100000000}',
  nestedSubstitutions: `${'$(echo '.repeat(120)}ls${')'.repeat(120)}`,
  manySubstitutions: fit('$(ls) '),
  unterminatedQuotes: fit('"$('),
  backticks: fit('`', 'echo '),
  evals: fit('eval ', '', 'ls'),
  doublingVariable: `x=ab; ${'x=$x$x; '.repeat(60)}rm -rf $x$x`,
  manyDoublings: fit('a=$a$a; '),
  manyCommands: fit('ls; '),
  longPipeline: fit('ls | ', '', 'ls'),
  hereDocuments: fit('cat <<E\n'),
  globs: fit('*?', 'cat '),
  ifsSplitting: fit('a${IFS}', 'echo '),
  sql: fit('delete from ', 'psql -c "', '"'),
  sedScript: `sed '${fit('s/a/b/;')}'`,
  awkProgram: `awk '${fit('print print ')}'`,
  functions: fit('f(){ :; }; '),
  forkBombs: fit('f(){ f|f& }; '),
  xargsInput: `echo ${'a '.repeat(4000)}| xargs rm`,
  decodedScript: `echo ${btoa('rm -rf / ; '.repeat(600))} | base64 -d | sh`,
  printfLoop: `printf '%s%s%s' ${'x '.repeat(3000)}| sh`,
  bigVariable: `x=${'a'.repeat(5000)}; echo ${'$x '.repeat(1200)}`,
  shellPipes: fit('echo ls | sh; '),
  directories: fit('cd a/../; '),
  tests: fit('[[ -f a ]] && ', '', 'true'),
}

describe('bounded work', () => {
  for (const [name, command] of Object.entries(adversarial)) {
    it(`${name}: answers quickly, never safe by accident of a bound`, () => {
      const start = performance.now()
      const result = classifyToolCall('bash', { command })
      // Generous for a cold, shared CI machine; warm, these take a few milliseconds to a few tens.
      expect(performance.now() - start).toBeLessThan(1500)
      expect(['safe', 'dangerous', 'destructive']).toContain(result.tier)
      expect(result.reason.length).toBeLessThan(160)
    })
  }

  it('keeps what it found before a bound was crossed', () => {
    expect(classifyToolCall('bash', { command: adversarial.decodedScript }).tier).toBe('destructive')
    expect(classifyToolCall('bash', { command: `rm -rf /; ${fit('$(ls) ')}` }).tier).toBe('dangerous')
    expect(classifyToolCall('bash', { command: fit('$(ls) ') }).reason).toBe('More than 128 substitutions: not parsed')
  })

  it('treats a value too large to compute as unknown, not as what it started with', () => {
    // $x doubles past the value bound: the rm target is unknown (dangerous), not "abab…" (a harmless name).
    expect(classifyToolCall('bash', { command: adversarial.doublingVariable })).toEqual({ tier: 'dangerous', reason: 'rm: deletes files recursively' })
  })
})
