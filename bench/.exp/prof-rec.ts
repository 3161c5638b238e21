import { mkdtempSync } from 'node:fs'
import { freePort, measure, startChild } from '../support.js'
const port = await freePort()
const bin = new URL('../../bin/plinth.js', import.meta.url).pathname
const p = await startChild(['--cpu-prof', '--cpu-prof-dir=/tmp/prof', bin, 'serve'], { DATA_DIR: mkdtempSync('/tmp/pb-'), PORT: String(port), PASSWORD_HASH_ITERATIONS: '1000', LOG_LEVEL: 'warn' }, port, '/health')
const api = async (token: string, method: string, path: string, body?: unknown): Promise<any> => (await fetch(`${p.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined })).json()
const { token } = await api('', 'POST', '/api/auth/sign-up/email', { email: 'b@example.com', password: 'bench password', name: 'B' })
await api(token, 'POST', '/api/v1/collections', { name: 'items', fields: [{ name: 'title', type: 'text', required: true }, { name: 'views', type: 'integer', required: false, indexed: true }] })
const ids: string[] = []
for (let i = 0; i < 300; i++) ids.push((await api(token, 'POST', '/api/v1/collections/items/records', { title: `t ${i}`, views: i })).id)
let n = 0
const mode = process.env.MODE ?? 'get'
const req = mode === 'get' ? { setupRequest: (r: any) => ({ ...r, path: `/api/v1/collections/items/records/${ids[n++ % ids.length]}` }) } : { setupRequest: (r: any) => ({ ...r, method: 'POST', path: '/api/v1/collections/items/records', body: JSON.stringify({ title: 'x', views: n++ }) }) }
console.log(await measure(p, '/', { headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, requests: [req] }))
await p.stop()
