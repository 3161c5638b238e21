import { NetworkError } from './errors.js'

/** Waits, or rejects with an aborted NetworkError when the signal fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new NetworkError(null, 'aborted', 'Aborted'))
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(new NetworkError(null, 'aborted', 'Aborted'))
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
