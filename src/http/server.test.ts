import { setTimeout as sleep } from 'node:timers/promises'
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
