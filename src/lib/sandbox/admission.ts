import { availableParallelism, totalmem } from 'node:os'

/** How many scripts may run at once, and how much memory their reservations may add up to. */
export interface AdmissionLimits {
  /** Scripts computing at once (each holds a thread and a core while it computes). */
  readonly slots: number
  /** Sum of the running scripts' reservations (`reservationBytes`), in bytes. */
  readonly budgetBytes: number
}

/** The share of the machine's memory (or the container's, when it is limited) that running scripts may reserve together. */
export const machineMemoryShare = 0.25

/**
 * The limits for this machine: max(2, cores) slots, and a quarter of its memory (the cgroup limit when it
 * is lower than the machine's), never less than what one script of the largest limit reserves.
 */
export function machineAdmissionLimits(largestReservationBytes: number): AdmissionLimits {
  const machine = totalmem()
  const constrained = process.constrainedMemory?.() ?? 0
  const memory = constrained > 0 && constrained < machine ? constrained : machine
  return {
    slots: Math.max(2, availableParallelism()),
    budgetBytes: Math.max(largestReservationBytes, Math.floor(memory * machineMemoryShare)),
  }
}

export interface Admission {
  /** Waits until a script reserving `bytes` may start (a slot free and the budget not exceeded); false when `signal` aborts first. */
  enter(bytes: number, signal?: AbortSignal): Promise<boolean>
  /** Ends a run admitted with `bytes`, letting the next in line start. */
  leave(bytes: number): void
  /** Running scripts and their reserved bytes, and how many wait. */
  readonly state: () => { running: number; reservedBytes: number; waiting: number }
}

/**
 * Admits scripts first come, first served: one starts when a slot is free and its reservation fits the
 * budget beside those running (alone, it always fits). Nobody overtakes: a large script at the head of
 * the line is not starved by small ones behind it.
 */
export function createAdmission(limits: AdmissionLimits): Admission {
  let running = 0
  let reservedBytes = 0
  const line: { bytes: number; go: () => void }[] = []
  const fits = (bytes: number) =>
    running < limits.slots && (running === 0 || reservedBytes + bytes <= limits.budgetBytes)
  const start = (bytes: number) => {
    running++
    reservedBytes += bytes
  }
  const admitWaiting = () => {
    while (line.length > 0 && fits(line[0]!.bytes)) {
      const next = line.shift()!
      start(next.bytes)
      next.go()
    }
  }
  return {
    enter(bytes, signal) {
      if (line.length === 0 && fits(bytes)) {
        start(bytes)
        return Promise.resolve(true)
      }
      if (signal?.aborted) return Promise.resolve(false)
      return new Promise((resolve) => {
        const entry = {
          bytes,
          go: () => {
            signal?.removeEventListener('abort', cancel)
            resolve(true)
          },
        }
        const cancel = () => {
          line.splice(line.indexOf(entry), 1)
          // The one leaving may have been what held the others back.
          admitWaiting()
          resolve(false)
        }
        line.push(entry)
        signal?.addEventListener('abort', cancel, { once: true })
      })
    },
    leave(bytes) {
      running--
      reservedBytes -= bytes
      admitWaiting()
    },
    state: () => ({ running, reservedBytes, waiting: line.length }),
  }
}
