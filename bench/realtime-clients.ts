import { randomBytes } from 'node:crypto'
import { connect, type Socket } from 'node:net'

// The realtime bench's load generator: many stream subscribers over raw TCP sockets, as cheap per frame as
// a client can be (no JSON parsing, no WebSocket library), so that what the bench measures is the server.
// Each subscriber only looks for the marker `"title":"rt-<n>"` in what arrives and notes, once per event n,
// the moment (performance.now()) the first byte of it was read.

export type Transport = 'websocket' | 'sse'

export interface Subscriber {
  /** Event n → when it arrived (performance.now()); unset until then. */
  readonly arrivals: Map<number, number>
  /** Resolves when the server ends the connection. */
  readonly ended: Promise<void>
  close(): void
}

const marker = '"title":"rt-'
const markerBytes = Buffer.from(marker)

/** Finds every `"title":"rt-<n>"` in `text` and notes n's arrival (the first one only). */
function scan(text: string, arrivals: Map<number, number>, now: number): void {
  for (let at = text.indexOf(marker); at !== -1; at = text.indexOf(marker, at + marker.length)) {
    let end = at + marker.length
    let n = 0
    let digits = 0
    for (; end < text.length; end++) {
      const c = text.charCodeAt(end) - 48
      if (c < 0 || c > 9) break
      n = n * 10 + c
      digits++
    }
    if (digits > 0 && end < text.length && !arrivals.has(n)) arrivals.set(n, now)
  }
}

/** Opens one subscriber; resolves once the server greeted it (`stream.connected`, or `: connected` for SSE). */
export function subscribe(port: number, path: string, token: string, transport: Transport): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    socket.setNoDelay(true)
    const arrivals = new Map<number, number>()
    const ended = new Promise<void>((done) => socket.once('close', () => done()))
    const key = randomBytes(16).toString('base64')
    const upgrade =
      transport === 'websocket'
        ? `Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${key}\r\n`
        : ''
    socket.write(`GET ${path} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer ${token}\r\n${upgrade}\r\n`)
    const greeting = transport === 'websocket' ? 'stream.connected' : ': connected'
    let head = ''
    let greeted = false
    let pending: Buffer = Buffer.alloc(0)
    socket.on('error', (err) => {
      if (!greeted) reject(err)
    })
    socket.setTimeout(30_000, () => {
      if (greeted) return
      socket.destroy()
      reject(new Error(`no greeting within 30 s on ${path}`))
    })
    socket.on('data', (chunk: Buffer) => {
      const now = performance.now()
      if (!greeted) {
        head += chunk.toString('latin1')
        if (!head.includes(greeting)) return
        if (!/^HTTP\/1\.1 (101|200)/.test(head)) return reject(new Error(`stream refused: ${head.slice(0, 300)}`))
        greeted = true
        socket.setTimeout(0)
        resolve({ arrivals, ended, close: () => socket.destroy() })
        return
      }
      if (transport === 'sse') return scanChunk(chunk, now)
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      pending = webSocketFrames(pending, socket, (payload) => scanChunk(payload, now))
    })

    function scanChunk(chunk: Buffer, now: number): void {
      // Cheap pre-check on bytes; a marker split across two reads is caught by the next frame's scan only
      // for WebSocket (frames are reassembled); SSE events are single small writes, read whole in practice.
      if (chunk.indexOf(markerBytes) === -1) return
      scan(chunk.toString('latin1'), arrivals, now)
    }
  })
}

/** Consumes whole server frames from `buffer` (unmasked), answers pings; returns what is left. */
function webSocketFrames(buffer: Buffer, socket: Socket, text: (payload: Buffer) => void): Buffer {
  let offset = 0
  while (buffer.length - offset >= 2) {
    const opcode = buffer[offset]! & 0x0f
    let length = buffer[offset + 1]! & 0x7f
    let header = 2
    if (length === 126) {
      if (buffer.length - offset < 4) break
      length = buffer.readUInt16BE(offset + 2)
      header = 4
    } else if (length === 127) {
      if (buffer.length - offset < 10) break
      length = Number(buffer.readBigUInt64BE(offset + 2))
      header = 10
    }
    if (buffer.length - offset < header + length) break
    const payload = buffer.subarray(offset + header, offset + header + length)
    if (opcode === 0x9) {
      // A client's frames are masked; an all-zero mask leaves the payload as it is.
      socket.write(Buffer.concat([Buffer.from([0x8a, 0x80 | payload.length, 0, 0, 0, 0]), payload]))
    } else if (opcode === 0x1) text(payload)
    offset += header + length
  }
  return offset === buffer.length ? Buffer.alloc(0) : buffer.subarray(offset)
}

/** Opens `count` subscribers, `parallel` handshakes at a time; `tokenOf(i)` is subscriber i's credential. */
export async function subscribeMany(
  port: number,
  path: string,
  count: number,
  tokenOf: (i: number) => string,
  transport: Transport,
  parallel = 100,
): Promise<Subscriber[]> {
  const out: Subscriber[] = new Array(count)
  let next = 0
  async function worker(): Promise<void> {
    while (next < count) {
      const i = next++
      out[i] = await subscribe(port, path, tokenOf(i), transport)
    }
  }
  await Promise.all(Array.from({ length: parallel }, worker))
  return out
}
