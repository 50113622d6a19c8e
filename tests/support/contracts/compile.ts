import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Abi, Hex } from 'viem'

export interface Artifact {
  abi: Abi
  bytecode: Hex
}

const here = fileURLToPath(new URL('.', import.meta.url))
const EVM_VERSION = 'cancun' // what anvil runs by default, and nothing newer than it knows

/**
 * Compiles every `.sol` file here with solc-js (npm `solc`) through standard JSON input. The output is
 * cached in the OS temp dir, keyed by compiler version and sources, since loading solc takes seconds.
 */
export function compileContracts(): Record<string, Artifact> {
  const solc = createRequire(import.meta.url)('solc')
  const sources = Object.fromEntries(
    readdirSync(here)
      .filter((f) => f.endsWith('.sol'))
      .sort()
      .map((f) => [f, { content: readFileSync(join(here, f), 'utf8') }]),
  )
  const input = {
    language: 'Solidity',
    sources,
    settings: { evmVersion: EVM_VERSION, optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  }
  const key = createHash('sha256').update(solc.version()).update(JSON.stringify(input)).digest('hex').slice(0, 16)
  const dir = join(tmpdir(), 'platform-test-solc')
  const cached = join(dir, `${key}.json`)
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, 'utf8'))

  const output = JSON.parse(solc.compile(JSON.stringify(input)))
  const errors = (output.errors ?? []).filter((e: { severity: string }) => e.severity === 'error')
  if (errors.length) throw new Error(errors.map((e: { formattedMessage: string }) => e.formattedMessage).join('\n'))
  const artifacts: Record<string, Artifact> = {}
  for (const file of Object.values(output.contracts) as Array<Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>) {
    for (const [name, c] of Object.entries(file)) artifacts[name] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` }
  }
  mkdirSync(dir, { recursive: true })
  // Write-then-rename: parallel test files never read a half-written cache entry.
  writeFileSync(`${cached}.${process.pid}`, JSON.stringify(artifacts))
  renameSync(`${cached}.${process.pid}`, cached)
  return artifacts
}
