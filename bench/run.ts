// npm run bench [name…]: each benchmark runs its baseline in the same run and prints the ratio.
import { benchDataTools } from './data-tools.js'
import { benchFiles } from './files.js'
import { benchHealth } from './health.js'
import { benchRecords } from './records.js'
import { benchSession } from './session.js'

const benches: Record<string, () => Promise<{ ok: boolean }>> = { health: benchHealth, session: benchSession, records: benchRecords, data: benchDataTools, files: benchFiles }

const wanted = process.argv.slice(2)
const names = wanted.length > 0 ? wanted : Object.keys(benches)
let failed = false
for (const name of names) {
  const bench = benches[name]
  if (!bench) throw new Error(`Unknown benchmark ${name}; known: ${Object.keys(benches).join(', ')}`)
  const result = await bench()
  if (!result.ok) failed = true
}
if (failed) process.exitCode = 1
