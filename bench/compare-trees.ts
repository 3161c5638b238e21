// npm run bench:compare: a change against its base, both servers up at once. TREES=/path/base,/path/head (each a
// checkout with node_modules) WHICH=get|create|patch|health ROUNDS=6; rounds alternate the order; prints server CPU µs per request.
// Only the servers come from the trees: seeding and load come from this checkout's bench/support.ts, so a change
// to the harness (how autocannon is driven, what it records) cannot pass for a change in the server.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { api, freePort, item, measure, startChild, type Child } from './support.js'

if (!process.env.TREES)
  throw new Error('TREES=/path/base,/path/head: the checkouts to compare (each with node_modules)')
const trees = process.env.TREES.split(',')
const which = process.env.WHICH ?? 'get'
const rounds = Number(process.env.ROUNDS ?? 6)

async function startTree(tree: string): Promise<Child> {
  const port = await freePort()
  const env = {
    DATA_DIR: mkdtempSync(join(tmpdir(), 'plinth-ab-')),
    PORT: String(port),
    HOST: '127.0.0.1',
    PASSWORD_HASH_ITERATIONS: '1000',
  }
  return startChild([join(tree, 'bin/plinth.js'), 'serve'], env, port, '/health')
}

const servers: { tree: string; server: Child; run: () => ReturnType<typeof measure> }[] = []
for (const tree of trees) {
  const server = await startTree(tree)
  const { token } = await api(server.url, '', 'POST', '/api/auth/sign-up/email', {
    email: 'bench@example.com',
    password: 'bench password',
    name: 'B',
  })
  await api(server.url, token, 'POST', '/api/v1/collections', {
    name: 'items',
    fields: [
      { name: 'title', type: 'text', required: true },
      { name: 'views', type: 'integer', required: false, indexed: true },
      { name: 'status', type: 'enum', required: false, enumValues: ['draft', 'published'] },
      { name: 'meta', type: 'json', required: false },
    ],
  })
  const ids: string[] = []
  for (let i = 0; i < 200; i += 50)
    ids.push(
      ...(
        await Promise.all(
          Array.from({ length: 50 }, (_, k) =>
            api(server.url, token, 'POST', '/api/v1/collections/items/records', item(i + k)),
          ),
        )
      ).map((r: { id: string }) => r.id),
    )
  const auth = { authorization: `Bearer ${token}` }
  let next = 0
  const run =
    which === 'get'
      ? () => measure(server, `/api/v1/collections/items/records/${ids[7]}`, { headers: auth })
      : which === 'create'
        ? () =>
            measure(server, '/api/v1/collections/items/records', {
              method: 'POST',
              headers: { ...auth, 'content-type': 'application/json' },
              body: JSON.stringify(item(1)),
            })
        : which === 'patch'
          ? () =>
              measure(server, '/', {
                headers: { ...auth, 'content-type': 'application/json' },
                requests: [
                  {
                    setupRequest: (req: any) => ({
                      ...req,
                      method: 'PATCH',
                      path: `/api/v1/collections/items/records/${ids[next++ % ids.length]}`,
                      body: JSON.stringify({ views: next % 10_000 }),
                    }),
                  },
                ],
              })
          : () => measure(server, '/health', {})
  servers.push({ tree, server, run })
}
try {
  for (const x of servers) await x.run()
  const cpu: Record<string, number[]> = {}
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? servers : [...servers].reverse()
    for (const x of order) (cpu[x.tree] ??= []).push((await x.run()).cpuMicros ?? NaN)
  }
  for (const [tree, v] of Object.entries(cpu))
    console.log(
      which,
      tree,
      'cpu µs per request',
      v.map((n) => n.toFixed(0)).join(' '),
      'median',
      [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!.toFixed(0),
    )
} finally {
  for (const x of servers) await x.server.stop()
}
