// Preloaded (NODE_OPTIONS=--require) into a child process that must stay offline (tests/workers/deploy.test.ts runs
// wrangler with it): every outgoing connection other than a local socket file is refused, and written as one JSON
// line to the file NO_NETWORK_LOG names, so the test sees an attempt even where the child swallows the error.
const { appendFileSync } = require('node:fs')
const net = require('node:net')

const logFile = process.env.NO_NETWORK_LOG
const connect = net.Socket.prototype.connect
net.Socket.prototype.connect = function (...args) {
  const options = Array.isArray(args[0]) ? args[0][0] : args[0]
  if (typeof options === 'string' || options?.path) return connect.apply(this, args)
  const target = typeof options === 'object' ? `${options.host ?? 'localhost'}:${options.port}` : `${args[1] ?? 'localhost'}:${options}`
  if (logFile) appendFileSync(logFile, `${JSON.stringify({ pid: process.pid, connect: target })}\n`)
  throw new Error(`offline: refused a connection to ${target}`)
}
