// Framework floor for GET by id in bench/records.ts: Hono on @hono/node-server with one parametric route
// doing one prepared better-sqlite3 lookup on Plinth's own project file, and nothing else (no auth, no
// checks). Plinth's GET by id can never be cheaper than this; the gap to it is our own cost.
import { serve } from '@hono/node-server'
import Database from 'better-sqlite3'
import { Hono } from 'hono'

const db = new Database(process.env.DB_FILE, { readonly: true })
const byId = db.prepare('select * from items where id = ? and deleted_at is null')
const app = new Hono()
app.get('/health', (c) => c.json({ status: 'ok' }))
app.get('/api/v1/collections/:name/records/:id', (c) => {
  const row = byId.get(c.req.param('id'))
  if (!row) return c.json({ error: 'record_not_found' }, 404)
  row.meta = JSON.parse(row.meta)
  return c.json({ data: row })
})
serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' })
process.on('SIGTERM', () => process.exit(0))
