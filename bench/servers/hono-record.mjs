// Framework floor for bench/records.ts: Hono on @hono/node-server answering GET by id, create and patch on
// Plinth's own project file (same table, indexes and search-index triggers) with the fewest statements
// that do the work (a lookup; an insert; a read and a versioned update), writes sharing commits as
// Plinth's do (group commit: the writes of one event-loop turn, answered after their commit), and
// nothing else: no auth, no validation, no access checks, no events. Plinth can never be cheaper than
// this; the gap to it is our own cost, and the floor's own ratio shows what a target asks of the stack.
import { randomUUID } from 'node:crypto'
import { setImmediate } from 'node:timers'
import { serve } from '@hono/node-server'
import Database from 'better-sqlite3'
import { Hono } from 'hono'

const db = new Database(process.env.DB_FILE)
db.pragma('busy_timeout = 5000')
db.pragma('synchronous = NORMAL')
const byId = db.prepare('select * from items where id = ? and deleted_at is null')
const insert = db.prepare(
  'insert into items (id, created_at, updated_at, created_by, updated_by, _version, title, views, status, meta) values (?, ?, ?, ?, ?, 1, ?, ?, ?, ?) returning *',
)
const update = db.prepare('update items set views = ?, updated_at = ?, updated_by = ?, _version = _version + 1 where id = ? and deleted_at is null and _version = ? returning *')
const now = () => Math.floor(Date.now() / 1000)
let waiting = null
/** Runs a write now, in this turn's transaction; resolves after its commit. */
function grouped(write) {
  if (!waiting) {
    db.exec('begin immediate')
    waiting = []
    setImmediate(() => {
      const done = waiting
      waiting = null
      db.exec('commit')
      for (const resolve of done) resolve()
    })
  }
  const result = write()
  return new Promise((resolve) => waiting.push(() => resolve(result)))
}
// The body straight from Node's request, as Plinth reads it (Hono's c.req.json() goes through a web stream).
const json = (c) =>
  new Promise((resolve, reject) => {
    const chunks = []
    c.env.incoming.on('data', (chunk) => chunks.push(chunk))
    c.env.incoming.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))))
    c.env.incoming.on('error', reject)
  })
const shown = (row) => ({ ...row, meta: row.meta === null ? null : JSON.parse(row.meta) })

const app = new Hono()
app.get('/health', (c) => c.json({ status: 'ok' }))
app.get('/api/v1/collections/:name/records/:id', (c) => {
  const row = byId.get(c.req.param('id'))
  if (!row) return c.json({ error: 'record_not_found' }, 404)
  return c.json({ data: shown(row) })
})
app.post('/api/v1/collections/:name/records', async (c) => {
  const body = await json(c)
  const t = now()
  const row = await grouped(() => insert.get(randomUUID().replaceAll('-', ''), t, t, 'u', 'u', body.title, body.views ?? null, body.status ?? null, JSON.stringify(body.meta ?? null)))
  return c.json(shown(row), 201)
})
app.patch('/api/v1/collections/:name/records/:id', async (c) => {
  const body = await json(c)
  const current = byId.get(c.req.param('id'))
  if (!current) return c.json({ error: 'record_not_found' }, 404)
  const row = await grouped(() => update.get(body.views, now(), 'u', current.id, current._version))
  if (!row) return c.json({ error: 'conflict' }, 409)
  return c.json(shown(row))
})
serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' })
process.on('SIGTERM', () => process.exit(0))
