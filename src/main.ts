import { ConfigError, loadConfig, readVersion, type Config } from './config.js'
import type { RunningServer } from './http/server.js'
import { topCommands } from './cli/commands.js'

// The server's modules are imported when a command needs them: `plinth blueprint …` is an HTTP client,
// and loading the whole server first took it seconds per call.

const usage = `Usage: plinth <command>

Commands:
  serve      start the API server (runs pending migrations first)
  migrate    apply pending database migrations and exit
${Object.entries(topCommands)
  .map(([name, entry]) => `  ${name.padEnd(10)} ${entry.summary}`)
  .join('\n')}

Each command takes --help.

Options:
  -v, --version   print the version
  -h, --help      print this help

Settings come from the environment; see docs/configuration.md.`

async function serve(config: Config): Promise<void> {
  const [{ createApp }, { listen }] = await Promise.all([import('./app.js'), import('./http/server.js')])
  const app = await createApp(config)
  let running: RunningServer
  try {
    running = await listen(app.fetch, {
      host: config.host,
      port: config.port,
      log: app.log,
      access: app.access,
      observe: app.observeRequest,
    })
  } catch (err) {
    await app.close()
    // What start-up logged (migrations, warnings) is still in the log's buffer; main exits next.
    await new Promise<void>((resolve) => app.log.flush(() => resolve()))
    throw err
  }
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
  const [{ migrateSystem }, { createDatabaseRegistry }, { createLogger }] = await Promise.all([
    import('./app.js'),
    import('./lib/db/index.js'),
    import('./lib/log.js'),
  ])
  const log = createLogger(config.logLevel)
  const registry = await createDatabaseRegistry({
    kind: config.database.kind,
    dataDir: config.dataDir,
    postgresUrl: config.database.kind === 'postgres' ? config.database.url : undefined,
  })
  try {
    const applied = await migrateSystem(registry, log)
    process.stdout.write(
      applied.length > 0 ? `Applied: ${applied.join(', ')}\n` : 'Nothing to apply: the database is up to date.\n',
    )
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
  if (command === '--version' || command === '-v' || command === 'version') {
    process.stdout.write(`${readVersion()}\n`)
    return
  }
  const entry = Object.hasOwn(topCommands, command) ? topCommands[command] : undefined
  if (entry) {
    const run = await entry.load()
    const stdin = { [Symbol.asyncIterator]: () => process.stdin[Symbol.asyncIterator]() }
    // eslint-disable-next-line no-restricted-syntax -- the client's PLINTH_URL, PLINTH_TOKEN and NO_COLOR, not server settings
    const io = { env: process.env, stdout: process.stdout, stderr: process.stderr, stdin }
    process.exitCode = await run(argv.slice(1), io)
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

main(process.argv.slice(2)).catch(async (err: unknown) => {
  const { ListenError } = await import('./http/server.js')
  // An operator's mistake (the port is taken) is one line; anything unexpected keeps its stack.
  const text =
    err instanceof ListenError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)
  process.stderr.write(`plinth: ${text}\n`)
  process.exit(1)
})
