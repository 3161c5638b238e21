import { setTimeout as sleep } from 'node:timers/promises'
import { connect } from 'node:net'
import { describe, expect, it } from 'vitest'
import { createLogger } from '../lib/log.js'
import { listen } from './server.js'

const log = createLogger('silent')

describe('graceful stop', () => {
  it('lets an in-flight request finish, then refuses new connections', async () => {
    let arrived!: () => void
    const started = new Promise<void>((r) => (arrived = r))
    const running = await listen(
      async () => {
        arrived()
        await sleep(300)
        return new Response('done')
      },
      { host: '127.0.0.1', port: 0, log },
    )
    const inflight = fetch(`${running.url}/slow`).then((r) => r.text())
    await started
    const stopped = running.stop(5000)
    expect(await inflight).toBe('done')
    await stopped
    await expect(fetch(`${running.url}/again`)).rejects.toThrow()
  })

  it('cuts requests that outlive the timeout', async () => {
    let arrived!: () => void
    const started = new Promise<void>((r) => (arrived = r))
    const running = await listen(
      async () => {
        arrived()
        await sleep(10_000)
        return new Response('too late')
      },
      { host: '127.0.0.1', port: 0, log },
    )
    const inflight = fetch(`${running.url}/stuck`).then(
      () => 'answered',
      () => 'cut',
    )
    await started
    await running.stop(200)
    expect(await inflight).toBe('cut')
  })

  it('closes idle keep-alive connections instead of waiting for them', async () => {
    const running = await listen(() => new Response('ok'), { host: '127.0.0.1', port: 0, log })
    expect(await (await fetch(`${running.url}/`)).text()).toBe('ok') // leaves a kept-alive socket
    const outcome = await Promise.race([running.stop(10_000).then(() => 'stopped'), sleep(3000).then(() => 'hung')])
    expect(outcome).toBe('stopped')
  })
})

describe('a refusal while the client still sends its body', () => {
  /**
   * A client that writes a 16 MiB chunked body flat out and only then reads (as curl does while its write
   * blocks): the answer must still be there. 16 MiB is several times what loopback buffers hold, and small
   * enough to be written inside the 5 s linger on a loaded machine (40 MiB once took longer in CI). Without the lingering close the server's socket is destroyed
   * once the 413 is flushed, the bytes still arriving reset the connection, and the write fails with EPIPE
   * or ECONNRESET before the answer is read.
   */
  it('reads and drops the rest, so the client hears the 413', async () => {
    const running = await listen(
      () =>
        new Response('{"error":"payload_too_large"}', {
          status: 413,
          headers: { Connection: 'close', 'Content-Type': 'application/json' },
        }),
      { host: '127.0.0.1', port: 0, log },
    )
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(running.port, '127.0.0.1')
        const received: Buffer[] = []
        socket.on('data', (chunk) => received.push(chunk))
        socket.on('error', reject)
        socket.on('end', () => resolve(Buffer.concat(received).toString('latin1')))
        socket.pause() // read nothing until everything is written
        const chunk = Buffer.alloc(256 * 1024, 120)
        const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])
        socket.write('POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n')
        let left = 64
        const pump = () => {
          while (left > 0) {
            left--
            if (!socket.write(frame)) return void socket.once('drain', pump)
          }
          socket.end('0\r\n\r\n', () => socket.resume())
        }
        pump()
      })
      expect(answer).toMatch(/^HTTP\/1\.1 413 /)
      expect(answer).toContain('payload_too_large')
    } finally {
      await running.stop(1000)
    }
  })
})
