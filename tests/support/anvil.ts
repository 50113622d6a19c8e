import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { mnemonicToAccount } from 'viem/accounts'

/** anvil's default dev mnemonic: its accounts are funded with 10 000 ETH at start. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk'

// The binary ships inside @foundry-rs/anvil's optional dependency for this platform.
const anvilBinary = () => {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch
  const pkg = createRequire(import.meta.url).resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`)
  return join(dirname(pkg), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil')
}

/**
 * A local chain on a free loopback port (`--port 0`; the bound port is read from anvil's own output),
 * ready once it answers `eth_chainId`. `chainId` 8453 mimics Base, 4217 Tempo.
 */
export async function startAnvil(opts: { chainId?: number; accounts?: number } = {}) {
  const chainId = opts.chainId ?? 8453
  const count = opts.accounts ?? 10
  const child = spawn(
    anvilBinary(),
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
