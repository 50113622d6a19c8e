import os from 'node:os'
import type { RuntimeMetrics } from '../lib/context'

/** CPU from the 1-minute load average over the core count, memory from the host's totals. */
export async function nodeMetrics(): Promise<RuntimeMetrics> {
  const cpuPercent = Math.min(100, (os.loadavg()[0] / Math.max(1, os.cpus().length)) * 100)
  const memoryPercent = ((os.totalmem() - os.freemem()) / os.totalmem()) * 100
  return {
    cpuPercent: Math.round(cpuPercent * 10) / 10,
    memoryPercent: Math.round(memoryPercent * 10) / 10,
    uptimeSec: Math.round(process.uptime()),
    runtime: `node ${process.version}`,
  }
}
