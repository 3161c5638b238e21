// npm run bench:compare: a change against its base, both servers up at once. TREES=/path/base,/path/head (each a
// checkout with node_modules) WHICH=get|create|patch|health; rounds alternate the order; prints server CPU µs per request.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
if (!process.env.TREES) throw new Error('TREES=/path/base,/path/head: the checkouts to compare (each with node_modules)')
const trees = process.env.TREES.split(',')
const which = process.env.WHICH ?? 'get'
const servers: any[] = []
for (const tree of trees) {
  const s = await import(`${tree}/bench/support.ts`)
  const server = await s.startPlinth({ PASSWORD_HASH_ITERATIONS: '1000', DATA_DIR: mkdtempSync(join(tmpdir(), 'plinth-ab-')) })
  const { token } = await s.api(server.url, '', 'POST', '/api/auth/sign-up/email', { email: 'bench@example.com', password: 'bench password', name: 'B' })
  await s.api(server.url, token, 'POST', '/api/v1/collections', { name: 'items', fields: [{ name: 'title', type: 'text', required: true }, { name: 'views', type: 'integer', required: false, indexed: true }, { name: 'status', type: 'enum', required: false, enumValues: ['draft', 'published'] }, { name: 'meta', type: 'json', required: false }] })
  const ids: string[] = []
  for (let i = 0; i < 200; i += 50) ids.push(...(await Promise.all(Array.from({ length: 50 }, (_, k) => s.api(server.url, token, 'POST', '/api/v1/collections/items/records', s.item(i + k))))).map((r: any) => r.id))
  const auth = { authorization: `Bearer ${token}` }
  let next = 0
  const run = which === 'get'
    ? () => s.measure(server, `/api/v1/collections/items/records/${ids[7]}`, { headers: auth })
    : which === 'create'
      ? () => s.measure(server, '/api/v1/collections/items/records', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(s.item(1)) })
      : which === 'patch'
        ? () => s.measure(server, '/', { headers: { ...auth, 'content-type': 'application/json' }, requests: [{ setupRequest: (req: any) => ({ ...req, method: 'PATCH', path: `/api/v1/collections/items/records/${ids[next++ % ids.length]}`, body: JSON.stringify({ views: next % 10_000 }) }) }] })
        : () => s.measure(server, '/health', {})
  servers.push({ tree, server, run })
}
try {
  for (const x of servers) await x.run()
  const cpu: Record<string, number[]> = {}
  for (let round = 0; round < 6; round++) {
    const order = round % 2 === 0 ? servers : [...servers].reverse()
    for (const x of order) (cpu[x.tree] ??= []).push((await x.run()).cpuMicros)
  }
  for (const [tree, v] of Object.entries(cpu)) console.log(which, tree, 'cpu µs per request', v.map((n) => n.toFixed(0)).join(' '), 'median', [...v].sort((a, b) => a - b)[3]!.toFixed(0))
} finally {
  for (const x of servers) await x.server.stop()
}
