import { createChildPool } from '../../src/lib/child-pool/pool.js'

// A server that dies (SIGKILL) while its child computes (src/lib/child-pool/pool.test.ts): prints the
// child's pid first, so the test can see that the child does not outlive it.
const pool = createChildPool({ entry: new URL('./child-pool-fixture.ts', import.meta.url), size: 1, heapMb: 64 })
const [pid] = await pool.run([{ pid: true }], { parts: 1, partMs: 60_000 })
process.stdout.write(`${JSON.stringify(pid)}\n`)
void pool.run([{ hang: true }], { parts: 1, partMs: 600_000 })
setTimeout(() => process.kill(process.pid, 'SIGKILL'), 500)
