import { configFromEnv, type RunningRuntime, startRuntime } from './runtime'

/**
 * Entry point of the local agent runtime (see ./runtime.ts for what it answers). Configured by env: PORT,
 * GATEWAY_TOKEN, AGENT_ID, DATA_DIR, RUNTIME_VERSION, optional RUNTIME_IMAGE, READY_DELAY_MS, HOST.
 * With EXIT_WITH_PARENT=1 (set by LocalRuntimeProvider, which keeps our stdin open as a pipe) it ends when
 * that pipe closes, so a runtime never outlives the server that started it, even one killed with SIGKILL.
 */
let runtime: RunningRuntime | undefined
let stopping = false
async function shutdown(reason: string) {
  if (stopping) return
  stopping = true
  await runtime?.stop()
  process.stdout.write(`${JSON.stringify({ level: 'info', event: 'stopped', time: new Date().toISOString(), reason })}\n`)
  process.exit(0)
}

// Before listening: a stop that comes the moment we are up still shuts down cleanly.
process.on('SIGTERM', () => void shutdown('SIGTERM'))
process.on('SIGINT', () => void shutdown('SIGINT'))
if (process.env.EXIT_WITH_PARENT === '1') {
  process.stdin.on('end', () => void shutdown('parent gone'))
  process.stdin.on('error', () => void shutdown('parent gone'))
  process.stdin.resume()
}

runtime = await startRuntime(configFromEnv(process.env))
