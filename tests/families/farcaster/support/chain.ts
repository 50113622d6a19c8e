import { spawn, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  getAddress,
  http,
  parseAbi,
  type Abi,
  type Address,
  type Hex,
} from 'viem'

const require = createRequire(import.meta.url)

/** The platform binary @foundry-rs/anvil installed (linux-amd64, darwin-arm64, ...). */
function anvilBinary() {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch
  const pkg = require.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`)
  return join(dirname(pkg), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil')
}

export interface Anvil {
  url: string
  chainId: number
  /** Unlocked, funded dev accounts. */
  accounts: Address[]
  close(): Promise<void>
}

/** anvil on a free loopback port (it picks the port: `--port 0`), resolved once it listens. */
export async function startAnvil(chainId: number): Promise<Anvil> {
  const child: ChildProcess = spawn(anvilBinary(), ['--host', '127.0.0.1', '--port', '0', '--chain-id', String(chainId), '--accounts', '4'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`anvil did not start:\n${out}`)), 20_000)
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const m = /Listening on (127\.0\.0\.1:\d+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve(`http://${m[1]}`)
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`anvil exited (${code}):\n${out}`))
    })
  })
  child.stdout!.resume()
  child.stderr!.resume()
  const accounts = await createWalletClient({ transport: http(url) }).getAddresses()
  return {
    url,
    chainId,
    accounts,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}

type Artifact = { abi: Abi; bytecode: Hex }

/**
 * Compiles `GateToken.sol` with solc-js (standard JSON): its ABI and creation bytecode. Loading solc costs
 * seconds per test file, so the artifact is kept in the temp dir, keyed by the source and compiler version.
 */
export function compileGateToken(): Artifact {
  const source = readFileSync(new URL('./GateToken.sol', import.meta.url), 'utf8')
  const version = (require('solc/package.json') as { version: string }).version
  const hash = createHash('sha256').update(`${version}\n${source}`).digest('hex').slice(0, 16)
  const cached = join(tmpdir(), `gate-token-${hash}.json`)
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, 'utf8')) as Artifact
  const artifact = solcCompile(require('solc'), source)
  const partial = `${cached}.${process.pid}`
  writeFileSync(partial, JSON.stringify(artifact))
  renameSync(partial, cached) // atomic: parallel files never read a half-written artifact
  return artifact
}

function solcCompile(solc: { compile(input: string): string }, source: string): Artifact {
  const input = {
    language: 'Solidity',
    sources: { 'GateToken.sol': { content: source } },
    settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input)))
  const errors = (output.errors ?? []).filter((e: { severity: string }) => e.severity === 'error')
  if (errors.length) throw new Error(errors.map((e: { formattedMessage: string }) => e.formattedMessage).join('\n'))
  const contract = output.contracts['GateToken.sol'].GateToken
  return { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` }
}

const transferAbi = parseAbi(['function transfer(address to, uint256 value) returns (bool)'])

/**
 * Deploys GateToken from the first dev account, minting `supply` to it, then sends each `grants` amount
 * to its address. Returns the token's address.
 */
export async function deployGateToken(anvil: Anvil, supply: bigint, grants: Array<[Address, bigint]>) {
  const chain = defineChain({
    id: anvil.chainId,
    name: 'anvil',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [anvil.url] } },
  })
  const [deployer] = anvil.accounts
  const wallet = createWalletClient({ account: deployer, chain, transport: http(anvil.url) })
  const reader = createPublicClient({ chain, transport: http(anvil.url) })
  const { abi, bytecode } = compileGateToken()
  const hash = await wallet.deployContract({ abi, bytecode, args: ['Gate Token', 'GATE', deployer, supply] })
  const receipt = await reader.waitForTransactionReceipt({ hash, pollingInterval: 50 })
  const token = getAddress(receipt.contractAddress!)
  for (const [to, amount] of grants) {
    const tx = await wallet.writeContract({ address: token, abi: transferAbi, functionName: 'transfer', args: [to, amount] })
    await reader.waitForTransactionReceipt({ hash: tx, pollingInterval: 50 })
  }
  return token
}
