import os from 'node:os'
import type { RuntimeMetrics } from '../lib/context'

type CpuTimes = { busy: number; total: number; at: number }

function cpuTimes(): CpuTimes {
  let busy = 0
  let total = 0
  for (const { times } of os.cpus()) {
    const all = times.user + times.nice + times.sys + times.irq + times.idle
    busy += all - times.idle
    total += all
  }
  return { busy, total, at: Date.now() }
}

let previous: CpuTimes | undefined
let lastCpuPercent = 0
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Host CPU as the busy share of all cores since the previous reading (sampled over 250 ms when there is
 * none or it is stale; windows under a second are too noisy and reuse the last figure); memory as
 * used / total. Load average would count waiting processes, not use.
 */
export async function nodeMetrics(): Promise<RuntimeMetrics> {
  if (!previous || Date.now() - previous.at > 60_000) {
    previous = cpuTimes()
    await sleep(250)
  }
  if (Date.now() - previous.at >= 250) {
    const now = cpuTimes()
    const total = now.total - previous.total
    lastCpuPercent = total > 0 ? ((now.busy - previous.busy) / total) * 100 : 0
    previous = now
  }
  const cpuPercent = lastCpuPercent
  const memoryPercent = ((os.totalmem() - os.freemem()) / os.totalmem()) * 100
  return {
    cpuPercent: Math.round(cpuPercent * 10) / 10,
    memoryPercent: Math.round(memoryPercent * 10) / 10,
    uptimeSec: Math.round(process.uptime()),
    runtime: `node ${process.version}`,
  }
}
