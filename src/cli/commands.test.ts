import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { runBlueprint } from './index.js'

/**
 * The subcommands end to end against a fake instance on a local port: what is sent (path, query, body,
 * credential), what is printed, the exit code. The real API is exercised by test/api/cli-blueprint.test.ts;
 * here are the answers a fresh instance cannot easily be made to give (a partial install, a 409, a proxy's
 * page) and exactly what is sent.
 */

interface Seen {
  method: string
  url: string
  authorization: string | undefined
  body: any
}
type Answer = { status: number; body: unknown } | { status: number; text: string }

let server: Server
let url: string
let seen: Seen[]
/** Answers by `METHOD /path` (query left out); a missing one is a 404 in Plinth's envelope. */
let answers: Record<string, Answer>

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = ''
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()))
    req.on('end', () => {
      seen.push({
        method: req.method!,
        url: req.url!,
        authorization: req.headers.authorization,
        body: raw ? JSON.parse(raw) : undefined,
      })
      const answer = answers[`${req.method} ${req.url!.split('?')[0]}`] ?? {
        status: 404,
        body: { error: 'not_found', message: `No route for ${req.method} ${req.url}`, details: {} },
      }
      const json = 'body' in answer
      res.writeHead(answer.status, { 'content-type': json ? 'application/json' : 'text/html' })
      res.end(json ? JSON.stringify(answer.body) : answer.text)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
beforeEach(() => {
  seen = []
  answers = {}
})

const dir = mkdtempSync(join(tmpdir(), 'plinth-cli-unit-'))
const docFile = join(dir, 'app.ebp.md')
writeFileSync(docFile, '---\nformat: service-blueprint-v1\n---\n')

async function run(argv: string[], env: Record<string, string> = { PLINTH_TOKEN: 'tok-1' }) {
  let stdout = ''
  let stderr = ''
  const code = await runBlueprint(argv, {
    env: { PLINTH_URL: url, ...env },
    stdout: { write: (text: string) => (stdout += text), isTTY: false },
    stderr: { write: (text: string) => (stderr += text) },
  })
  return { code, stdout, stderr }
}

const planOf = (verdicts: object[], over: object = {}) => ({
  status: 200,
  body: {
    data: {
      ok: true,
      installable: true,
      diagnostics: [],
      blueprint: { id: 'help-desk', name: 'Help desk', version: '1.0.0' },
      baseline: null,
      verdicts: verdicts.map((v) => ({ reason: null, changedPaths: [], warnings: [], resourceRef: null, ...v })),
      orphans: [],
      actions: [],
      missingSecrets: [],
      ...over,
    },
  },
})

const twoBricks = planOf([
  { brickId: 'tickets', kind: 'collection', verdict: 'CREATE', requiresConsent: false },
  { brickId: 'g', kind: 'grants', verdict: 'CREATE', requiresConsent: true },
])

const installOf = (status: string, resources: object[]) => ({
  status: 201,
  body: { data: { id: 'ins_1', blueprintId: 'help-desk', name: 'Help desk', version: '1.0.0', status, resources } },
})

describe('blueprint export', () => {
  const exported = { status: 200, body: { data: { source: '---\nid: exported\n---\n' } } }

  it('asks for what the flags name and prints the document', async () => {
    answers['GET /api/v1/blueprints/export'] = exported
    const result = await run(['export', '--collections', 'a,b', '--search-indexes', 'i', '--nav', '--flows', 'f'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe('---\nid: exported\n---\n')
    expect(seen).toHaveLength(1)
    expect(seen[0]!.authorization).toBe('Bearer tok-1')
    const query = new URL(seen[0]!.url, url).searchParams
    expect(Object.fromEntries(query)).toEqual({ collections: 'a,b', searchIndexes: 'i', nav: 'true', flows: 'f' })
  })

  it('-o writes the document to the file; stdout stays empty', async () => {
    answers['GET /api/v1/blueprints/export'] = exported
    const file = join(dir, 'out.ebp.md')
    const result = await run(['export', '-o', file])
    expect(result.code, result.stderr).toBe(0)
    expect(readFileSync(file, 'utf8')).toBe('---\nid: exported\n---\n')
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain(`Wrote ${file}`)
    expect(seen[0]!.url).toBe('/api/v1/blueprints/export')
  })

  it('--json prints the raw answer', async () => {
    answers['GET /api/v1/blueprints/export'] = exported
    const result = await run(['export', '--json', '--roles', 'r'])
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual(exported.body)
  })

  it('names the secret parameters on stderr; a file that cannot be written is exit 1', async () => {
    answers['GET /api/v1/blueprints/export'] = {
      status: 200,
      body: { data: { source: 'doc\n', secrets: ['hookSecret', 'flowToken'] } },
    }
    const result = await run(['export', '--namespace', 'p'])
    expect(result).toEqual({
      code: 0,
      stdout: 'doc\n',
      stderr:
        'Secret parameters (values not exported; give them as PLINTH_SECRET_<name> on install): hookSecret, flowToken\n',
    })
    const unwritable = await run(['export', '--namespace', 'p', '-o', join(dir, 'no', 'such', 'dir.md')])
    expect(unwritable.code).toBe(1)
    expect(unwritable.stderr).toMatch(/^error: cannot write .*dir\.md \(ENOENT\)\n/)
  })

  it('an instance without the export: the API error on stderr, exit 1', async () => {
    const result = await run(['export', '--collections', 'a'])
    expect(result.code).toBe(1)
    expect(result.stderr).toBe('error: not_found: No route for GET /api/v1/blueprints/export?collections=a\n')
  })
})

describe('blueprint install', () => {
  it('without --yes: prints the plan and the bricks needing consent, installs nothing, exit 1', async () => {
    answers['POST /api/v1/blueprints/plan'] = twoBricks
    const result = await run(['install', docFile])
    expect(result.code).toBe(1)
    expect(result.stdout).toContain('+ CREATE grants g [needs consent]\n')
    expect(result.stderr).toContain('Not installed: a brick needs consent (g)')
    expect(seen.map((s) => s.url)).toEqual(['/api/v1/blueprints/plan'])
  })

  it('with --yes: consents to those bricks, installs, prints each outcome; complete is exit 0', async () => {
    answers['POST /api/v1/blueprints/plan'] = twoBricks
    answers['POST /api/v1/blueprints/installs'] = installOf('complete', [
      {
        brickId: 'tickets',
        brickKind: 'collection',
        verdict: 'CREATE',
        resourceRef: 'd_t',
        status: 'settled',
        error: null,
      },
      { brickId: 'g', brickKind: 'grants', verdict: 'CREATE', resourceRef: 'r1', status: 'settled', error: null },
    ])
    const result = await run(['install', docFile, '--yes', '--assemblies', 'core', '--secrets-provided', 's'])
    expect(result.code, result.stderr).toBe(0)
    expect(seen.map((s) => s.url)).toEqual(['/api/v1/blueprints/plan', '/api/v1/blueprints/installs?apply=true'])
    const source = readFileSync(docFile, 'utf8')
    expect(seen[1]!.body).toEqual({ source, assemblies: ['core'], secretsProvided: ['s'], consent: ['g'] })
    expect(result.stdout).toContain('Install ins_1 of Help desk 1.0.0: complete\n')
    expect(result.stdout).toContain('  settled CREATE grants g (r1)\n')
  })

  it('nothing needing consent installs without --yes; a partial install is exit 1', async () => {
    answers['POST /api/v1/blueprints/plan'] = planOf([
      { brickId: 't', kind: 'collection', verdict: 'CREATE', requiresConsent: false },
    ])
    answers['POST /api/v1/blueprints/installs'] = installOf('partial', [
      { brickId: 't', brickKind: 'collection', verdict: 'CREATE', resourceRef: null, status: 'failed', error: 'boom' },
    ])
    const result = await run(['install', docFile])
    expect(result.code).toBe(1)
    expect(seen[1]!.body.consent).toEqual([])
    expect(result.stdout).toContain('Install ins_1 of Help desk 1.0.0: partial\n  failed CREATE collection t: boom\n')
  })

  it('a plan that is not installable installs nothing, exit 1', async () => {
    answers['POST /api/v1/blueprints/plan'] = planOf(
      [{ brickId: 'r', kind: 'role', verdict: 'BLOCKED', reason: 'name.taken', requiresConsent: false }],
      { installable: false },
    )
    const result = await run(['install', docFile, '--yes'])
    expect(result.code).toBe(1)
    expect(result.stdout).toContain('! BLOCKED role r: name.taken')
    expect(result.stderr).toBe('Not installed: the plan is not installable.\n')
    expect(seen).toHaveLength(1)
  })

  it('a refusal prints the error and what its details carry (blocked verdicts, diagnostics)', async () => {
    answers['POST /api/v1/blueprints/plan'] = twoBricks
    answers['POST /api/v1/blueprints/installs'] = {
      status: 409,
      body: {
        error: 'conflict',
        message: 'A brick is blocked',
        details: {
          verdicts: [{ brickId: 'r', kind: 'role', verdict: 'BLOCKED', reason: 'name.taken', requiresConsent: false }],
          diagnostics: [{ severity: 'error', code: 'brick.invalid_json', message: 'bad', line: 7, brickId: 'r' }],
        },
      },
    }
    const result = await run(['install', docFile, '-y'])
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(
      `error: conflict: A brick is blocked\n${docFile}:7: error brick.invalid_json [r] bad\n! BLOCKED role r: name.taken\n`,
    )
  })
})

describe('blueprint install: secret values from the environment', () => {
  const declaring = {
    status: 200,
    body: {
      data: {
        ok: true,
        diagnostics: [],
        blueprint: {
          id: 'help-desk',
          name: 'Help desk',
          version: '1.0.0',
          params: [
            { name: 'prefix', type: 'identifier', required: false, secret: false },
            { name: 'hookSecret', type: 'secret', required: true, secret: true },
          ],
        },
        bricks: [],
      },
    },
  }

  it('PLINTH_SECRET_<name> of a declared secret: counted as provided by the plan, its value sent by install only', async () => {
    answers['POST /api/v1/blueprints/validate'] = declaring
    answers['POST /api/v1/blueprints/plan'] = planOf([{ brickId: 'h', kind: 'webhook', verdict: 'CREATE' }])
    answers['POST /api/v1/blueprints/installs'] = installOf('complete', [])
    const env = { PLINTH_TOKEN: 't', PLINTH_SECRET_hookSecret: 'v4lue-x', PLINTH_SECRET_undeclared: 'nope' }
    const result = await run(['install', docFile, '--secrets-provided', 'other'], env)
    expect(result.code, result.stderr).toBe(0)
    expect(seen.map((s) => s.url)).toEqual([
      '/api/v1/blueprints/validate',
      '/api/v1/blueprints/plan',
      '/api/v1/blueprints/installs?apply=true',
    ])
    expect(seen[1]!.body.secretsProvided).toEqual(['other', 'hookSecret'])
    expect(JSON.stringify(seen[1]!.body)).not.toContain('v4lue-x')
    expect(seen[2]!.body).toMatchObject({
      secretsProvided: ['other', 'hookSecret'],
      secrets: { hookSecret: 'v4lue-x' },
    })
    expect(result.stdout + result.stderr).not.toContain('v4lue-x')
  })

  it('a secret the install lacks: the error, and where its value goes', async () => {
    answers['POST /api/v1/blueprints/plan'] = planOf([{ brickId: 'h', kind: 'webhook', verdict: 'CREATE' }], {
      missingSecrets: ['hookSecret'],
    })
    answers['POST /api/v1/blueprints/installs'] = {
      status: 400,
      body: {
        error: 'invalid_request',
        message: 'No value for the secret parameters hookSecret',
        details: { missingSecrets: ['hookSecret'] },
      },
    }
    const result = await run(['install', docFile])
    expect(result.code).toBe(1)
    expect(result.stdout).toContain(
      'Missing secrets: hookSecret (give each as PLINTH_SECRET_<name> in the environment)',
    )
    expect(result.stderr).toBe(
      'error: invalid_request: No value for the secret parameters hookSecret\n' +
        'Give each secret value in the environment as PLINTH_SECRET_<name>.\n',
    )
    // No PLINTH_SECRET_ variable: the declarations were not asked for.
    expect(seen.map((s) => s.url)).toEqual(['/api/v1/blueprints/plan', '/api/v1/blueprints/installs?apply=true'])
  })
})

describe('blueprint plan and validate', () => {
  it('--param values are typed as the document declares them', async () => {
    answers['POST /api/v1/blueprints/validate'] = {
      status: 200,
      body: {
        data: {
          ok: true,
          diagnostics: [],
          blueprint: {
            id: 'x',
            name: 'X',
            version: '1.0.0',
            params: [
              { name: 'seats', type: 'number', required: false, secret: false },
              { name: 'on', type: 'boolean', required: false, secret: false },
              { name: 'label', type: 'string', required: false, secret: false },
            ],
          },
          bricks: [],
        },
      },
    }
    answers['POST /api/v1/blueprints/plan'] = planOf([])
    const argv = ['plan', docFile, '--param', 'seats=4', '--param', 'on=true', '--param', 'label=12']
    const result = await run([...argv, '--param', 'other=x'])
    expect(result.code, result.stderr).toBe(0)
    expect(seen[1]!.body.params).toEqual({ seats: 4, on: true, label: '12', other: 'x' })
    expect(result.stdout).toBe('Plan for Help desk 1.0.0 (help-desk), new:\nno bricks: installable\n')
  })

  it('no credential: the 401 says where one goes', async () => {
    answers['POST /api/v1/blueprints/validate'] = {
      status: 401,
      body: { error: 'unauthorized', message: 'Sign in to do this', details: {} },
    }
    const result = await run(['validate', docFile], {})
    expect(result.code).toBe(1)
    expect(seen[0]!.authorization).toBeUndefined()
    expect(result.stderr).toBe(
      'error: unauthorized: Sign in to do this\nSet PLINTH_TOKEN to a session token or an sk- key of the instance.\n',
    )
  })

  it('an answer that is not the API (a proxy page) is bad_response; --json prints an error body to stdout', async () => {
    answers['POST /api/v1/blueprints/validate'] = { status: 502, text: '<html>Bad gateway</html>' }
    const proxy = await run(['validate', docFile])
    expect(proxy.code).toBe(1)
    expect(proxy.stderr).toMatch(/^error: bad_response: POST \/api\/v1\/blueprints\/validate answered 502/)

    answers['POST /api/v1/blueprints/validate'] = {
      status: 413,
      body: { error: 'payload_too_large', message: 'Too large', details: { limit: 1 } },
    }
    const json = await run(['validate', docFile, '--json'])
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toEqual({ error: 'payload_too_large', message: 'Too large', details: { limit: 1 } })
  })
})

describe('blueprint: usage', () => {
  it.each([
    { argv: [], stderr: 'Missing a command' },
    { argv: ['explode'], stderr: 'Unknown command: blueprint explode' },
    { argv: ['validate'], stderr: 'plinth blueprint validate: Missing the blueprint file' },
    { argv: ['plan', '/no/such/file.md'], stderr: 'plinth blueprint plan: No such file: /no/such/file.md' },
    { argv: ['install', 'a.md', '--force'], stderr: "plinth blueprint install: Unknown option '--force'" },
    { argv: ['export', 'stray'], stderr: 'plinth blueprint export: Unexpected argument: stray' },
    { argv: ['plan', 'a.md', '--url', 'ftp://x'], stderr: 'Not an http(s) URL' },
    { argv: ['export', '--namespace', 'p', '--format', 'md'], stderr: '--format is not taken' },
  ])('$argv → exit 2: $stderr', async ({ argv, stderr }) => {
    const result = await run(argv)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(stderr)
    expect(seen).toEqual([])
  })

  it('--help, for the group and each command, exit 0', async () => {
    for (const argv of [
      ['--help'],
      ['validate', '--help'],
      ['plan', '-h'],
      ['install', '--help'],
      ['export', '--help'],
    ]) {
      const result = await run(argv)
      expect(result.code).toBe(0)
      expect(result.stdout).toMatch(/^Usage: plinth blueprint /)
    }
    expect(seen).toEqual([])
  })
})
