import type { FromChild, ToChild } from './protocol.js'

/** Hands a part's result back to the parent as soon as it is known (the parent's deadline moves on to the next part). */
export type EmitPart = (index: number, value: unknown) => void

/**
 * The child side of lib/child-pool: runs `handle` for each job the parent sends, one at a time, and tells
 * the parent when it is ready. The child ends when the parent goes away (its IPC channel closes), so a
 * server that dies, however it dies, leaves no child behind. A handler that throws ends its job with the
 * parts it did not emit counted as failed by the parent.
 */
export function serveJobs(handle: (job: unknown, emit: EmitPart) => Promise<void>): void {
  const send = (message: FromChild) => process.send!(message)
  process.on('disconnect', () => process.exit(0))
  process.on('message', (message: ToChild) => {
    const emit: EmitPart = (index, value) => send({ type: 'part', id: message.id, index, value })
    void handle(message.job, emit)
      .catch(() => undefined)
      .then(() => send({ type: 'done', id: message.id }))
  })
  send({ type: 'ready' })
}
