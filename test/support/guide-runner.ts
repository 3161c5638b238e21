import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './harness.js'
import { createTestDatabase, testDatabaseUrl } from './postgres.js'
import { s3Settings, startS3Store, type TestS3Store } from './s3-store.js'
import { kill, serve, type Running } from './serve-process.js'
import {
  checkBlocks,
  examplePorts,
  readBlocks,
  readServerBlock,
  rewritePorts,
  serviceSettings,
  type ServerStart,
} from './guide-blocks.js'

const bin = new URL('../../bin/plinth.js', import.meta.url).pathname

/** What running a guide gave: bash's exit code, everything it printed, and the servers' output. */
export interface GuideResult {
  code: number | null
  output: string
  /** The guide's line where the failing command is, when bash stopped on one. */
  failedAt: number | null
  servers: string
}

/** Whether the guide's server blocks name outside services (PostgreSQL, Redis, S3): it needs them to run. */
export function needsServices(markdown: string): boolean {
  return readBlocks(markdown).some(
    (block) => block.lang === 'bash' && block.tags.includes('server') && /^\s*export\s/m.test(block.code),
  )
}

/**
 * Runs a guide as docs/testing.md ("Guides") describes: its server blocks become real `plinth serve`
 * processes on free ports with fresh data directories (a fresh database, Redis prefix and S3 store when the
 * guide names them, or when TEST_DATABASE_URL / TEST_REDIS_URL are set), then every `bash` block runs, in
 * order, in one bash session with `set -Eeuo pipefail` in a fresh working directory, `plinth` on its PATH.
 */
export async function runGuide(path: string, limitMs = 240_000): Promise<GuideResult> {
  const markdown = readFileSync(path, 'utf8')
  const blocks = readBlocks(markdown)
  const problems = checkBlocks(blocks)
  if (problems.length) throw new Error(`${path} breaks the guides' convention:\n${problems.join('\n')}`)

  const ports = new Map<number, number>()
  for (const port of examplePorts(markdown)) ports.set(port, await freePort())
  const work = mkdtempSync(join(tmpdir(), 'plinth-guide-'))
  const cleanups: (() => Promise<void>)[] = [async () => rmSync(work, { recursive: true, force: true })]
  const servers: Running[] = []
  try {
    const starts = blocks
      .filter((block) => block.lang === 'bash' && block.tags.includes('server'))
      .flatMap((block) => readServerBlock({ ...block, code: rewritePorts(block.code, ports) }))
    const shared = await services(needsServices(markdown), cleanups)
    for (const start of starts) {
      const dataDir = mkdtempSync(join(tmpdir(), 'plinth-guide-data-'))
      cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }))
      // The default port is the guide's 8090, which the test moves to a free port like every other.
      const port = String(ports.get(8090) ?? (await freePort()))
      servers.push(await startServer({ ...start, env: { PORT: port, ...start.env } }, shared, dataDir))
    }

    const { script, lines } = sessionScript(blocks, ports)
    mkdirSync(join(work, '.bin'))
    writeFileSync(join(work, '.bin', 'plinth'), `#!/bin/sh\nexec "${process.execPath}" "${bin}" "$@"\n`)
    chmodSync(join(work, '.bin', 'plinth'), 0o755)
    writeFileSync(join(work, '.guide.sh'), script)
    const { code, output } = await runSession(work, limitMs)
    const failed = output.match(/guide-runner: failed at script line (\d+)/)
    return {
      code,
      output,
      failedAt: failed ? commandStart(script, lines, Number(failed[1])) : null,
      servers: servers.map((server) => server.output().slice(-4000)).join('\n---\n'),
    }
  } finally {
    for (const server of servers) await kill(server)
    for (const cleanup of cleanups.reverse()) await cleanup()
  }
}

/** The settings of the outside services: the test's own, fresh for this guide. */
async function services(named: boolean, cleanups: (() => Promise<void>)[]): Promise<Record<string, string>> {
  const adminUrl = testDatabaseUrl()
  const redisUrl = process.env.TEST_REDIS_URL
  if (named && (!adminUrl || !redisUrl)) throw new Error('this guide needs TEST_DATABASE_URL and TEST_REDIS_URL')
  const out: Record<string, string> = {}
  if (adminUrl) {
    const database = await createTestDatabase(adminUrl)
    cleanups.push(database.drop)
    Object.assign(out, { DATABASE_URL: database.url, SECRET_KEY: randomBytes(32).toString('hex') })
  }
  if (redisUrl)
    Object.assign(out, { REDIS_URL: redisUrl, REDIS_PREFIX: `plinth-guide:${randomBytes(6).toString('hex')}:` })
  if (named) {
    const store: TestS3Store = await startS3Store()
    cleanups.push(() => store.stop())
    Object.assign(out, s3Settings(store))
  }
  return out
}

/** One `plinth serve` child: the line's own settings, a fresh DATA_DIR, the test's services over the guide's. */
function startServer(start: ServerStart, shared: Record<string, string>, dataDir: string): Promise<Running> {
  for (const name of Object.keys(start.env))
    if (serviceSettings.includes(name)) throw new Error(`line ${start.line}: ${name} belongs in an export line`)
  return serve({ ...start.env, DATA_DIR: dataDir, ...shared })
}

/**
 * The runnable blocks as one script, ports rewritten, and for each script line the guide line it came from.
 * An ERR trap names the failing line; `set -E` carries it into functions and subshells.
 */
function sessionScript(
  blocks: ReturnType<typeof readBlocks>,
  ports: Map<number, number>,
): { script: string; lines: (number | null)[] } {
  const head = [
    'set -Eeuo pipefail',
    `trap 'echo "guide-runner: failed at script line $LINENO" >&2' ERR`,
    'export PATH="$PWD/.bin:$PATH"',
  ]
  const lines: (number | null)[] = head.map(() => null)
  const body: string[] = [...head]
  for (const block of blocks) {
    if (block.lang !== 'bash' || block.tags.length) continue
    rewritePorts(block.code, ports)
      .split('\n')
      .forEach((text, i) => {
        body.push(text)
        lines.push(block.line + i)
      })
  }
  return { script: `${body.join('\n')}\n`, lines }
}

/**
 * The guide line where the command on a script line begins: bash names the line a command ended on, and a
 * command continued with `\` began on an earlier one.
 */
function commandStart(script: string, lines: (number | null)[], scriptLine: number): number | null {
  const text = script.split('\n')
  let at = scriptLine - 1
  while (at > 0 && lines[at - 1] !== null && text[at - 1]!.endsWith('\\')) at--
  return lines[at] ?? null
}

/** Runs the script in its own process group (so what it leaves in the background goes with it). */
function runSession(work: string, limitMs: number): Promise<{ code: number | null; output: string }> {
  const child = spawn('bash', ['.guide.sh'], {
    cwd: work,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LANG: 'C.UTF-8' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let output = ''
  const take = (chunk: Buffer) => {
    if (output.length < 2_000_000) output += chunk.toString()
  }
  child.stdout.on('data', take)
  child.stderr.on('data', take)
  const killGroup = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      // the group is already gone: nothing was left in the background
    }
  }
  // A safety net for a command that never returns (the test's own timeout would leave the group behind).
  const guard = setTimeout(killGroup, limitMs)
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    // Background commands may hold the pipes open: end them when bash exits, then read what is left.
    child.once('exit', (code, signal) => {
      clearTimeout(guard)
      killGroup()
      child.once('close', () => resolve({ code: code ?? (signal ? 128 : null), output }))
    })
  })
}
