// Framework floor for bench/health.ts: Hono on @hono/node-server answering the same JSON with one
// handler and nothing else. Plinth can never be cheaper than this; the gap to it is our own cost.
import { serve } from '@hono/node-server'
import { Hono } from 'hono'

const body = JSON.parse(process.env.BODY ?? '{}')
const app = new Hono()
app.get('/health', (c) => c.json(body))
serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' })
process.on('SIGTERM', () => process.exit(0))
