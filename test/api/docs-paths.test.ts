import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'

/**
 * The reference pages name real routes (issue 31 item 6): every `METHOD /api/…` a page of docs/ (or the
 * README, or examples/) shows — in prose, a table, a heading or a curl line — is a route of the OpenAPI
 * document, and every local address it shows uses the default port. Example values (`:id`, `{id}`,
 * `<name>`, an id cut short with `…`, a `desk_` name) stand for any one path segment.
 */

let server: TestServer
let routes: { method: string; pattern: RegExp; path: string }[]

beforeAll(async () => {
  server = await startServer()
  const spec = (await server.request('GET', '/api/openapi.json')).body as { paths: Record<string, object> }
  routes = Object.entries(spec.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => ({
      method: method.toUpperCase(),
      path,
      pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+').replace(/\./g, '\\.')}$`),
    })),
  )
})
afterAll(async () => {
  await server?.stop()
})

const root = new URL('../../', import.meta.url).pathname
function pages(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return pages(path)
    return entry.name.endsWith('.md') ? [path] : []
  })
}
const documents = [...pages('docs'), ...pages('examples'), 'README.md']

const method = '(?:GET|POST|PUT|PATCH|DELETE)'
/** A method, or several sharing a path (`GET, POST`, `POST / GET`, `` `POST`/`PATCH ``). */
const methods = new RegExp(
  `\\b(${method}(?:\`?\\s*[,/]\\s*\`?${method})*)\\s*\\|?\\s*\`?(\\/api\\/[^\\s\`"')|,]*)`,
  'g',
)
const curl = new RegExp(`curl\\b.*?-X\\s+(${method})\\b.*?https?:\\/\\/[^/\\s]+(\\/api\\/[^\\s\`"')]*)`, 'g')

/** Every request a page shows: `GET /api/x`, `| GET, POST | /api/x |`, `curl -X POST …/api/x`. */
function requestsIn(text: string): { methods: string[]; path: string; line: number }[] {
  const out: { methods: string[]; path: string; line: number }[] = []
  text.split('\n').forEach((line, i) => {
    for (const [, listed, path] of [...line.matchAll(methods), ...line.matchAll(curl)])
      out.push({ methods: listed!.match(/GET|POST|PUT|PATCH|DELETE/g)!, path: path!, line: i + 1 })
  })
  return out
}

/** A shown path as route paths: no query, example segments as one segment, `[/:id]` both with and without. */
function normalise(path: string): string[] {
  const bare = path.replace(/[?#].*$/, '').replace(/[.:;]+$/, '')
  const variants = bare.includes('[') ? [bare.replace(/\[[^\]]*\]/g, ''), bare.replace(/[[\]]/g, '')] : [bare]
  return variants.map((variant) =>
    variant
      .split('/')
      .map((segment) => (/^(:|\{|<|\$\{)|…|\.\.\./.test(segment) ? 'x' : segment))
      .join('/'),
  )
}

describe('the docs', () => {
  it('show only routes that exist', () => {
    const missing: string[] = []
    for (const page of documents) {
      for (const request of requestsIn(readFileSync(join(root, page), 'utf8'))) {
        const known = normalise(request.path).some((path) =>
          routes.some((r) => request.methods.includes(r.method) && r.pattern.test(path)),
        )
        if (!known) missing.push(`${page}:${request.line}: ${request.methods.join(', ')} ${request.path}`)
      }
    }
    expect(missing).toEqual([])
  })

  it('show local addresses on the default port (8090)', () => {
    const wrong: string[] = []
    for (const page of documents) {
      readFileSync(join(root, page), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          // Plinth's own addresses: http(s) to a local host, the API, health or the root (not Ollama's /v1 …).
          // A line setting PORT shows another instance on purpose; one naming S3_ENDPOINT or S3_PUBLIC_ENDPOINT, the S3 store.
          for (const [, port] of line.matchAll(
            /https?:\/\/(?:localhost|127\.0\.0\.1):(\d+)(?=\/api|\/health|\/?[\s`'"]|\/?$)/g,
          ))
            if (port !== '8090' && !/PORT=|S3_ENDPOINT=|S3_PUBLIC_ENDPOINT/.test(line))
              wrong.push(`${page}:${i + 1}: ${line.trim()}`)
        })
    }
    expect(wrong).toEqual([])
  })
})
