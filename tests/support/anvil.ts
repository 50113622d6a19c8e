import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { createPublicClient, createWalletClient, defineChain, getAddress, http, type Address, type LocalAccount } from 'viem'
import { mnemonicToAccount } from 'viem/accounts'
import type { Artifact } from './contracts/compile'

/** anvil's default dev mnemonic: its accounts are funded with 10 000 ETH at start. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk'

// The binary ships inside @foundry-rs/anvil's optional dependency for this platform; only the
// linux-amd64 one is installed, so elsewhere it is missing.
const anvilBinary = (() => {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch
  try {
    const pkg = createRequire(import.meta.url).resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`)
    const bin = join(dirname(pkg), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil')
    return existsSync(bin) ? bin : undefined
  } catch {
    return undefined
  }
})()

/** Whether `startAnvil` can run here: suites that need a chain `describe.skipIf(!anvilAvailable)`. */
export const anvilAvailable = anvilBinary !== undefined

/**
 * A local chain on a free loopback port (`--port 0`; the bound port is read from anvil's own output),
 * ready once it answers `eth_chainId`. `chainId` 8453 mimics Base, 4217 Tempo.
 */
export async function startAnvil(opts: { chainId?: number; accounts?: number } = {}) {
  const chainId = opts.chainId ?? 8453
  const count = opts.accounts ?? 10
  if (!anvilBinary) throw new Error(`anvil binary not available for ${process.platform}-${process.arch}`)
  const child = spawn(
    anvilBinary,
    ['--host', '127.0.0.1', '--port', '0', '--chain-id', String(chainId), '--accounts', String(count), '--mnemonic', ANVIL_MNEMONIC],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  const killOnExit = () => child.kill('SIGKILL')
  process.once('exit', killOnExit) // a crashed worker must not leave anvil behind

  let output = ''
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`anvil did not start:\n${output}`)), 15_000)
    const fail = (e: Error) => {
      clearTimeout(timer)
      child.kill('SIGKILL')
      reject(e)
    }
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const m = /Listening on (127\.0\.0\.1:\d+)/.exec(output)
      if (m) {
        clearTimeout(timer)
        resolve(`http://${m[1]}`)
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.once('error', fail)
    child.once('exit', (code) => fail(new Error(`anvil exited (${code}):\n${output}`)))
  })
  child.stdout.removeAllListeners('data').resume()
  child.stderr.removeAllListeners('data').resume()
  await waitForRpc(url, chainId)

  const accounts = Array.from({ length: count }, (_, addressIndex) => mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex }))
  let closed: Promise<void> | undefined
  return {
    url,
    chainId,
    /** Funded local accounts (viem `LocalAccount`s): sign offline or send transactions. */
    accounts,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        process.removeListener('exit', killOnExit)
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      })),
  }
}

export type Anvil = Awaited<ReturnType<typeof startAnvil>>

/** viem clients on the local chain; the wallet sends as `account` (the first funded account unless told). */
export function anvilClients(anvil: Anvil, account: LocalAccount = anvil.accounts[0]) {
  const chain = defineChain({
    id: anvil.chainId,
    name: 'anvil',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [anvil.url] } },
  })
  const transport = http(anvil.url)
  // anvil mines each transaction at once: poll for receipts often rather than viem's default 4 s.
  return {
    client: createPublicClient({ chain, transport, pollingInterval: 50 }),
    wallet: createWalletClient({ chain, transport, account, pollingInterval: 50 }),
  }
}

/** Deploys a compiled contract (see `contracts/compile.ts`) from `from` (the first funded account); its address. */
export async function deployContract(anvil: Anvil, artifact: Artifact, args: readonly unknown[] = [], from?: LocalAccount): Promise<Address> {
  const { client, wallet } = anvilClients(anvil, from)
  const hash = await wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args })
  const receipt = await client.waitForTransactionReceipt({ hash })
  if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`deployment failed: ${hash}`)
  return getAddress(receipt.contractAddress)
}

async function waitForRpc(url: string, chainId: number) {
  const deadline = Date.now() + 10_000
  for (;;) {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      })
      const { result } = (await res.json()) as { result?: string }
      if (result && Number(result) === chainId) return
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`anvil at ${url} did not answer eth_chainId ${chainId}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
