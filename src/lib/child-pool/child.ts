import { Worker } from 'node:worker_threads'
import type { FromChild, ToChild } from './protocol.js'

/** Hands a part's result back to the parent as soon as it is known (the parent's deadline moves on to the next part). */
export type EmitPart = (index: number, value: unknown) => void

/**
 * The child side of lib/child-pool: runs `handle` for each job the parent sends, one at a time, and tells
 * the parent when it is ready. The child ends when the parent goes away, however it goes (its IPC channel
 * closes; or, while a job blocks this thread, a watchdog thread sees the parent gone), so a server that
 * dies leaves no child computing behind. A handler that throws ends its job with the parts it did not
 * emit counted as failed by the parent.
 */
export function serveJobs(handle: (job: unknown, emit: EmitPart) => Promise<void>): void {
  const send = (message: FromChild) => process.send!(message)
  process.on('disconnect', () => process.exit(0))
  watchParent()
  process.on('message', (message: ToChild) => {
    const emit: EmitPart = (index, value) => send({ type: 'part', id: message.id, index, value })
    void handle(message.job, emit)
      .catch(() => undefined)
      .then(() => send({ type: 'done', id: message.id }))
  })
  send({ type: 'ready' })
}

/** A thread of its own that kills this process once its parent is gone: the main thread may be stuck in a builtin and never see the channel close. */
function watchParent(): void {
  const code = `
    const { workerData } = require('node:worker_threads')
    setInterval(() => { if (process.ppid !== workerData.parent) process.kill(process.pid, 'SIGKILL') }, 500)
  `
  new Worker(code, {
    eval: true,
    workerData: { parent: process.ppid },
    resourceLimits: { maxOldGenerationSizeMb: 8 },
  }).unref()
}
