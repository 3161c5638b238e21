import { createApp, migrateSystem } from './app.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { listen } from './http/server.js'
import { createDatabaseRegistry } from './lib/db/index.js'
import { createLogger } from './lib/log.js'

const usage = `Usage: plinth <command>

Commands:
  serve     start the API server (runs pending migrations first)
  migrate   apply pending database migrations and exit

Settings come from the environment; see docs/configuration.md.`

async function serve(config: Config): Promise<void> {
  const app = await createApp(config)
  const running = await listen(app.fetch, { host: config.host, port: config.port, log: app.log, access: app.access })
  app.log.info(
    { url: running.url, database: config.database.kind, storage: config.storage.kind, dataDir: config.dataDir },
    `Plinth ${config.version} listening on ${running.url}`,
  )

  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    app.log.info({ signal }, 'shutting down')
    await running.stop(config.shutdownTimeoutMs)
    await app.close()
    app.log.info('stopped')
    app.log.flush(() => process.exit(0))
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
}

async function migrate(config: Config): Promise<void> {
  const log = createLogger(config.logLevel)
  const registry = await createDatabaseRegistry({
    kind: config.database.kind,
    dataDir: config.dataDir,
    postgresUrl: config.database.kind === 'postgres' ? config.database.url : undefined,
  })
  try {
    const applied = await migrateSystem(registry, log)
    process.stdout.write(applied.length > 0 ? `Applied: ${applied.join(', ')}\n` : 'Nothing to apply: the database is up to date.\n')
  } finally {
    await registry.close()
  }
}

async function main(argv: string[]): Promise<void> {
  const command = argv[0] ?? 'serve'
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${usage}\n`)
    return
  }
  if (command !== 'serve' && command !== 'migrate') {
    process.stderr.write(`Unknown command: ${command}\n\n${usage}\n`)
    process.exitCode = 2
    return
  }
  let config: Config
  try {
    config = loadConfig()
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`)
      process.exitCode = 1
      return
    }
    throw err
  }
  await (command === 'serve' ? serve(config) : migrate(config))
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`plinth: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
  process.exit(1)
})
