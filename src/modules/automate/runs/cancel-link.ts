import { RunAborted } from './executor.js'

/**
 * A signal aborted with `own`'s reason, or as cancelled when `parent` aborts (the awaiting parent run
 * stopped); `dispose` stops listening to the parent (a loop may await thousands of sub-runs in one run).
 */
export function cancelledWith(own: AbortSignal, parent: AbortSignal): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController()
  const fromOwn = () => controller.abort(own.reason)
  const fromParent = () =>
    controller.abort(
      new RunAborted('cancelled', 'The run that started this sub-flow stopped (it timed out or was cancelled)'),
    )
  if (own.aborted) fromOwn()
  else if (parent.aborted) fromParent()
  own.addEventListener('abort', fromOwn, { once: true })
  parent.addEventListener('abort', fromParent, { once: true })
  return {
    signal: controller.signal,
    dispose() {
      own.removeEventListener('abort', fromOwn)
      parent.removeEventListener('abort', fromParent)
    },
  }
}
