import { existsSync, readdirSync, readFileSync } from 'node:fs'

/** Whether this platform lets a test read each thread's CPU time (Linux /proc). */
export const threadCpuReadable = existsSync('/proc/self/task') && existsSync('/proc/thread-self/schedstat')

export interface ProcessSample {
  /** RSS when sampling began, and the highest seen while it ran (bytes). */
  readonly rssBefore: number
  readonly rssPeak: number
  /** CPU time (ms) each thread that ended while sampling used since sampling began (or since it was first seen). */
  readonly endedThreadsCpuMs: number[]
}

const threadCpu = (tid: string): number | null => {
  try {
    return Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'latin1').split(' ', 1)[0]) / 1e6
  } catch {
    return null
  }
}

/**
 * Samples this process (the test server runs in it) every `everyMs`: its RSS, and on Linux each thread's
 * CPU time (schedstat), so a script's worker thread, terminated at the end of its run, can be found among
 * the threads that ended and its CPU time read. A sample is up to `everyMs` old: a thread's last few
 * milliseconds before it ended may be missed. `stop` waits up to `settleMs` for a thread to end, then 250 ms
 * for the threads ending with it.
 */
export function sampleProcess(everyMs = 5): { stop(settleMs?: number): Promise<ProcessSample> } {
  const rssBefore = process.memoryUsage.rss()
  let rssPeak = rssBefore
  const first = new Map<string, number>()
  const last = new Map<string, number>()
  const read = () => {
    rssPeak = Math.max(rssPeak, process.memoryUsage.rss())
    if (!threadCpuReadable) return
    for (const tid of readdirSync('/proc/self/task')) {
      const cpu = threadCpu(tid)
      if (cpu === null) continue
      if (!first.has(tid)) first.set(tid, cpu)
      last.set(tid, cpu)
    }
  }
  read()
  const timer = setInterval(read, everyMs)
  return {
    async stop(settleMs = 3000) {
      const deadline = Date.now() + settleMs
      const ended = () =>
        threadCpuReadable ? [...last.keys()].filter((tid) => !existsSync(`/proc/self/task/${tid}`)) : []
      while (threadCpuReadable && ended().length === 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, everyMs))
      // A worker's threads (its own, a loader's) end one after the other: give the rest a moment.
      await new Promise((resolve) => setTimeout(resolve, 250))
      clearInterval(timer)
      read()
      return { rssBefore, rssPeak, endedThreadsCpuMs: ended().map((tid) => last.get(tid)! - first.get(tid)!) }
    },
  }
}
