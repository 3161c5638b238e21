import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { loadConfig, settings } from '../src/config.js'
import { kill, serve, type Running } from './support/serve-process.js'

/**
 * The Docker image and the scale-out stack (issue 31 item 5, docs/running.md#docker) as far as they can be
 * checked without a Docker engine: the Dockerfile's statements, the compose file's structure (the two
 * instances share every setting that makes them one, and Plinth's own config accepts those settings), and
 * the image's health check run against a real `plinth serve`.
 */

const root = new URL('../', import.meta.url).pathname
const read = (path: string) => readFileSync(join(root, path), 'utf8')
const healthcheck = join(root, 'deploy/healthcheck.js')

interface Instruction {
  keyword: string
  args: string
  stage: number
}

/** The Dockerfile's instructions, continuation lines joined, each with the index of its stage (FROM). */
function dockerfile(text: string): Instruction[] {
  const joined = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ')
  let stage = -1
  return joined
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [, keyword = '', args = ''] = /^\s*(\S+)\s*(.*)$/.exec(line) ?? []
      if (keyword.toUpperCase() === 'FROM') stage++
      return { keyword: keyword.toUpperCase(), args: args.trim(), stage }
    })
}

/** `A=1 B=2` (ENV, ARG) as pairs. */
const pairs = (args: string) =>
  Object.fromEntries(args.split(/\s+/).map((pair) => pair.split('=', 2) as [string, string]))

/** Compose's interpolation: `${NAME}`, `${NAME:-default}`, `${NAME:?error}` and `$$`. */
function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\$|\$\{(\w+)(?::([-?])([^}]*))?\}/g, (whole, name?: string, op?: string, word?: string) => {
    if (whole === '$$') return '$'
    const set = vars[name!]
    if (set !== undefined && set !== '') return set
    if (op === '?') throw new Error(`${name}: ${word}`)
    return op === '-' ? word! : ''
  })
}

const steps = dockerfile(read('Dockerfile'))
const last = Math.max(...steps.map((s) => s.stage))
const final = steps.filter((s) => s.stage === last)
const build = steps.filter((s) => s.stage >= 0 && s.stage < last)
const of = (list: Instruction[], keyword: string) => list.filter((s) => s.keyword === keyword)
const imageEnv: Record<string, string> = Object.assign({}, ...of(final, 'ENV').map((s) => pairs(s.args)))
const healthCommand = (() => {
  const [check] = of(final, 'HEALTHCHECK')
  const json = /\bCMD\s+(\[.*\])$/.exec(check?.args ?? '')?.[1]
  return json ? (JSON.parse(json) as string[]) : []
})()

interface Service {
  image?: string
  build?: string
  environment?: Record<string, string>
  healthcheck?: { test: string[] }
  depends_on?: Record<string, { condition: string }>
  volumes?: string[]
  ports?: string[]
  restart?: string
  command?: string[] | string
}
const compose = parse(read('compose.yaml'), { merge: true }) as {
  services: Record<string, Service>
  volumes: Record<string, unknown>
}
const services = compose.services
const plinths = Object.keys(services).filter((name) => services[name]!.build === '.')
const caddyfile = read('deploy/Caddyfile')

describe('Dockerfile', () => {
  it('builds every stage on a Node LTS line of Debian slim, named by the NODE_VERSION argument', () => {
    const [arg] = of(steps, 'ARG')
    expect(arg?.stage).toBe(-1)
    const major = Number(pairs(arg!.args).NODE_VERSION)
    expect(major % 2, 'an even Node major is an LTS line').toBe(0)
    expect(major).toBeGreaterThanOrEqual(20)
    for (const from of of(steps, 'FROM')) expect(from.args).toMatch(/^node:\$\{NODE_VERSION\}-bookworm-slim\b/)
    expect(last).toBeGreaterThan(0)
  })

  it('installs production dependencies and compiles the sources into the cache bin/plinth.js starts from', () => {
    const runs = of(build, 'RUN').map((s) => s.args)
    expect(runs.some((r) => /\bnpm ci\b.*--omit=dev/.test(r))).toBe(true)
    const copiesSrc = build.findIndex((s) => s.keyword === 'COPY' && /^src\b/.test(s.args))
    const compiles = build.findIndex((s) => s.keyword === 'RUN' && /\bnode bin\/plinth\.js\b/.test(s.args))
    expect(copiesSrc).toBeGreaterThanOrEqual(0)
    expect(compiles).toBeGreaterThan(copiesSrc)
    // The cache lives in node_modules/.cache, which the final stage takes whole from the build stage.
    expect(read('bin/plinth.js')).toContain("join(root, 'node_modules', '.cache', 'plinth')")
    expect(of(final, 'COPY').some((s) => /^--from=build\s+\/app\s/.test(s.args))).toBe(true)
  })

  it('runs as a non-root user, listens on every interface on the default port, data in the /data volume', () => {
    const users = of(final, 'USER').map((s) => s.args)
    expect(users.length).toBeGreaterThan(0)
    expect(['root', '0']).not.toContain(users.at(-1))
    expect(imageEnv.HOST).toBe('0.0.0.0')
    expect(imageEnv.PORT ?? settings.PORT.default).toBe(settings.PORT.default)
    expect(of(final, 'EXPOSE').map((s) => s.args)).toEqual([settings.PORT.default])
    expect(imageEnv.DATA_DIR).toBe('/data')
    expect(of(final, 'VOLUME').flatMap((s) => JSON.parse(s.args) as string[])).toContain(imageEnv.DATA_DIR)
    for (const name of Object.keys(imageEnv)) expect(Object.keys(settings), `ENV ${name}`).toContain(name)
  })

  it('checks its health with the script it copies, and starts `plinth serve`', () => {
    expect(healthCommand).toEqual(['node', 'deploy/healthcheck.js'])
    expect(of(final, 'COPY').some((s) => s.args.startsWith('deploy/healthcheck.js '))).toBe(true)
    expect(of(final, 'ENTRYPOINT').map((s) => JSON.parse(s.args))).toEqual([['node', 'bin/plinth.js']])
    expect(of(final, 'CMD').map((s) => JSON.parse(s.args))).toEqual([['serve']])
  })

  it('copies only what exists and what .dockerignore lets into the build context', () => {
    const allowed = read('.dockerignore')
      .split('\n')
      .filter((line) => line.startsWith('!'))
      .map((line) => line.slice(1).replace(/\/$/, ''))
    expect(read('.dockerignore').split('\n')).toContain('*')
    for (const copy of of(steps, 'COPY').filter((s) => !s.args.startsWith('--from'))) {
      for (const source of copy.args.split(/\s+/).slice(0, -1)) {
        expect(existsSync(join(root, source)), source).toBe(true)
        expect(allowed, `.dockerignore lets ${source} in`).toContain(source)
      }
    }
  })
})

describe('compose.yaml', () => {
  it('runs two Plinth instances built from this repository, behind the proxy', () => {
    expect(plinths).toEqual(['plinth-1', 'plinth-2'])
    const upstreams = /reverse_proxy\s+([^{\n]+)\{/.exec(caddyfile)?.[1]?.trim().split(/\s+/)
    expect(upstreams).toEqual(plinths.map((name) => `${name}:${settings.PORT.default}`))
    expect(Object.keys(services.proxy?.depends_on ?? {}).sort()).toEqual(plinths)
  })

  it('gives both instances the same settings, every one of them a real Plinth setting', () => {
    const [first, second] = plinths.map((name) => services[name]!.environment ?? {})
    expect(second).toEqual(first)
    for (const name of Object.keys(first!)) expect(Object.keys(settings), name).toContain(name)
    for (const shared of ['DATABASE_URL', 'REDIS_URL', 'S3_ENDPOINT', 'S3_BUCKET', 'SECRET_KEY', 'PUBLIC_URL'])
      expect(first, shared).toHaveProperty(shared)
  })

  it('settings Plinth accepts as one scale-out deployment on the stack’s own services', () => {
    const environment = services['plinth-1']!.environment!
    expect(() => interpolate(environment.SECRET_KEY!, {})).toThrow(/SECRET_KEY/)
    const vars = { SECRET_KEY: 'k'.repeat(48) }
    const env = {
      ...imageEnv,
      ...Object.fromEntries(Object.entries(environment).map(([k, v]) => [k, interpolate(String(v), vars)])),
    }
    const config = loadConfig(env)
    expect(config.database.kind).toBe('postgres')
    expect(config.redisUrl).not.toBeNull()
    expect(config.storage.kind).toBe('s3')
    expect(config.trustProxy).toBe(true)
    expect(config.secretKey).toBe(vars.SECRET_KEY)

    // Each address names a service of the stack, with the credentials that service is given.
    const database = new URL(env.DATABASE_URL!)
    const postgres = services[database.hostname]!.environment!
    expect(interpolate(postgres.POSTGRES_PASSWORD!, {})).toBe(database.password)
    expect(postgres.POSTGRES_USER).toBe(database.username)
    expect(postgres.POSTGRES_DB).toBe(database.pathname.slice(1))
    expect(services).toHaveProperty(new URL(env.REDIS_URL!).hostname)
    const minio = services[new URL(env.S3_ENDPOINT!).hostname]!.environment!
    expect(interpolate(minio.MINIO_ROOT_USER!, {})).toBe(env.S3_ACCESS_KEY_ID)
    expect(interpolate(minio.MINIO_ROOT_PASSWORD!, {})).toBe(env.S3_SECRET_ACCESS_KEY)
    // The bucket exists: the one-shot service creates it.
    expect(String(services['minio-bucket']!.command)).toContain(`mc mb --ignore-existing local/${env.S3_BUCKET}`)
    // Presigned URLs are signed for an address clients reach: MinIO's S3 port, published on this machine.
    const s3Public = new URL(interpolate(env.S3_PUBLIC_ENDPOINT!, {}))
    expect(config.storage).toMatchObject({ publicEndpoint: s3Public.origin })
    expect(services[new URL(env.S3_ENDPOINT!).hostname]!.ports).toContain(`127.0.0.1:${s3Public.port}:9000`)
    // PUBLIC_URL is the proxy's published address.
    const publicPort = new URL(env.PUBLIC_URL!).port
    expect(services.proxy!.ports).toContain(`${publicPort}:${publicPort}`)
    expect(caddyfile).toMatch(new RegExp(`^:${publicPort} \\{`, 'm'))
  })

  it('keeps each instance’s DATA_DIR in a volume of its own', () => {
    const mounts = plinths.map((name) => services[name]!.volumes!.find((v) => v.endsWith(`:${imageEnv.DATA_DIR}`)))
    const names = mounts.map((mount) => mount?.split(':')[0])
    expect(new Set(names).size).toBe(plinths.length)
    for (const name of names) expect(compose.volumes).toHaveProperty(name!)
  })

  it('has a health check on every long-running service, and waits on it', () => {
    for (const name of plinths) expect(services[name]!.healthcheck!.test).toEqual(['CMD', ...healthCommand])
    for (const [name, service] of Object.entries(services)) {
      if (service.restart !== 'no') expect(service.healthcheck?.test.length, `${name} healthcheck`).toBeGreaterThan(0)
      for (const [on, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect(['service_healthy', 'service_completed_successfully'], `${name} → ${on}`).toContain(condition)
        if (condition === 'service_healthy') expect(services[on]!.healthcheck, `${on} healthcheck`).toBeDefined()
        else expect(services[on]!.restart, `${on} runs once`).toBe('no')
      }
    }
  })
})

describe('deploy/healthcheck.js (the image’s HEALTHCHECK)', () => {
  let server: Running
  let dataDir: string
  let port: string

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'plinth-docker-'))
    server = await serve({ DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' })
    port = new URL(server.url).port
  })
  afterAll(async () => {
    if (server) await kill(server)
    rmSync(dataDir, { recursive: true, force: true })
  })

  /** Runs the script as Docker would, with the container's settings. */
  function check(env: Record<string, string>): Promise<{ code: number; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [healthcheck],
        { env: { PATH: process.env.PATH ?? '', ...env } },
        (err, _out, stderr) => resolve({ code: err ? Number(err.code) : 0, stderr }),
      )
    })
  }

  it('passes against a running server: listening on every interface (the image) or on loopback', async () => {
    expect(await check({ HOST: '0.0.0.0', PORT: port })).toEqual({ code: 0, stderr: '' })
    expect(await check({ HOST: '127.0.0.1', PORT: port })).toEqual({ code: 0, stderr: '' })
  })

  it('fails, saying why, when /health answers anything but 200 with status ok', async () => {
    const stub = createServer((req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"status":"ok"}')
    })
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve))
    try {
      const { port: stubPort } = stub.address() as AddressInfo
      const result = await check({ HOST: '0.0.0.0', PORT: String(stubPort) })
      expect(result.code).toBe(1)
      expect(result.stderr).toContain('unhealthy: GET /health answered 503')
    } finally {
      await new Promise((resolve) => stub.close(resolve))
    }
  })

  it('fails when the server is gone', async () => {
    await kill(server)
    const result = await check({ HOST: '0.0.0.0', PORT: port })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^unhealthy: GET http:\/\/127\.0\.0\.1:\d+\/health: .*ECONNREFUSED/)
  })
})
