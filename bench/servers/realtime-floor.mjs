// The realtime bench's floor: the least a Node process does to fan one frame out to every subscriber. It
// accepts the same stream requests as Plinth (WebSocket upgrade or SSE, on any path), and on POST /fire?n=N
// answers at once, then writes one prebuilt frame carrying `"title":"rt-N"` (the size of Plinth's) to every
// socket in one loop: no checks, no serialisation per class, no batches. Ping frames are not sent.
import { createHash } from 'node:crypto'
import { setImmediate } from 'node:timers'
import { createServer } from 'node:http'

const sockets = new Set()
const streams = new Set()

function wsFrame(payload) {
  const length = payload.length
  const header = length < 126 ? Buffer.from([0x81, length]) : Buffer.from([0x81, 126, length >> 8, length & 255])
  return Buffer.concat([header, payload])
}

const server = createServer((req, res) => {
  if (req.url === '/health') return res.end('{"status":"ok"}')
  if (req.method === 'POST' && req.url.startsWith('/fire')) {
    const n = new URL(req.url, 'http://x').searchParams.get('n')
    res.writeHead(201, { 'content-type': 'application/json' }).end('{}')
    const record = { id: 'x'.repeat(32), created_at: 1, updated_at: 1, created_by: 'y'.repeat(32), updated_by: 'y'.repeat(32), deleted_at: null, _version: 1, title: `rt-${n}`, status: 'open', secret: 's', rank: 1 }
    const json = JSON.stringify({ type: 'record.create', collection: 'items', record, at: 1 })
    const ws = wsFrame(Buffer.from(json))
    const sse = Buffer.from(`id: ${'z'.repeat(32)}\nevent: record.create\ndata: ${json}\n\n`)
    setImmediate(() => {
      for (const socket of sockets) socket.write(ws)
      for (const stream of streams) stream.write(sse)
    })
    return
  }
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' })
  res.on('error', () => {})
  req.socket.on('error', () => {})
  res.write('retry: 3000\n: connected\n\n')
  streams.add(res)
  res.once('close', () => streams.delete(res))
})
server.on('upgrade', (req, socket) => {
  const accept = createHash('sha1').update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64')
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`)
  socket.write(wsFrame(Buffer.from('{"type":"stream.connected","collection":"items"}')))
  socket.setNoDelay(true)
  socket.on('data', () => {})
  socket.on('error', () => {})
  // The HTTP server's sockets allow half-open connections: end this one when the client ends its side.
  socket.on('end', () => socket.destroy())
  sockets.add(socket)
  socket.once('close', () => sockets.delete(socket))
})
server.keepAliveTimeout = 60_000
server.listen(Number(process.env.PORT), '127.0.0.1')
