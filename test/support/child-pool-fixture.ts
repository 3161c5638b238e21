import { serveJobs } from '../../src/lib/child-pool/child.js'

// A child for src/lib/child-pool/pool.test.ts: each part of a job is one instruction.
type Instruction =
  | { echo: unknown }
  | { sleepMs: number; then: unknown }
  | { hang: true }
  | { exit: number }
  | { oom: true }
  | { pid: true }
  | { env: true }

serveJobs(async (job, emit) => {
  const parts = job as Instruction[]
  for (const [index, part] of parts.entries()) {
    if ('echo' in part) emit(index, part.echo)
    else if ('sleepMs' in part) {
      await new Promise((resolve) => setTimeout(resolve, part.sleepMs))
      emit(index, part.then)
    } else if ('hang' in part) for (;;);
    else if ('exit' in part) process.exit(part.exit)
    else if ('oom' in part) {
      const kept: string[] = []
      for (let i = 0; ; i++) kept.push(`${i}`.repeat(1000))
    } else if ('env' in part) emit(index, Object.keys(process.env))
    else emit(index, process.pid)
  }
})
