import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { createApp, type Plinth } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { listen, type RunningServer } from '../../src/http/server.js'
import { send, type TestServer } from './harness.js'

/**
 * A second Plinth instance beside one `startServer` started: the same PostgreSQL database, SECRET_KEY,
 * REDIS_URL and REDIS_PREFIX (read from the first instance's config), its own DATA_DIR, port and log, and
 * whatever `env` adds (pass the same limits as the first). `stop()` leaves the shared database to the
 * first instance, so stop the sibling first.
 */
export async function startSibling(first: TestServer, env: Record<string, string>): Promise<TestServer> {
  const database = first.app.config.database
  if (database.kind !== 'postgres') throw new Error('A sibling instance needs the first one to run on PostgreSQL (TEST_DATABASE_URL)')
  const { redisUrl, redisPrefix } = first.app.config
  if (!redisUrl) throw new Error('A sibling instance needs the first one to use Redis (REDIS_URL)')
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-sibling-'))
  const logs: string[] = []
  let app: Plinth | undefined
  let running: RunningServer | undefined
  try {
    const port = await freePort()
    const config = loadConfig({
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      PASSWORD_HASH_ITERATIONS: '1000',
      AUTH_RATE_LIMIT: '10000',
      ...env,
      DATABASE_URL: database.url,
      SECRET_KEY: first.app.config.secretKey,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: redisPrefix,
    })
    app = await createApp(config, { logDestination: { write: (line: string) => void logs.push(line) } })
    running = await listen(app.fetch, { host: '127.0.0.1', port, log: app.log, access: app.access })
  } catch (err) {
    await app?.close()
    rmSync(dataDir, { recursive: true, force: true })
    throw err
  }
  const started = { app, running }
  return {
    url: running.url,
    app,
    dataDir,
    logs,
    request: (method, path, options) => send(started.running.url, method, path, options),
    async stop() {
      await started.running.stop(1000)
      await started.app.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** A free TCP port on loopback (as the harness does, so PUBLIC_URL is the real address). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
}
