import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, type CliRun } from '../support/cli-process.js'
import { brick, documentOf, lineOf, namespaceParam } from '../../src/modules/blueprints/document/test-document.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { utf8, zipBytes } from '../support/zip.js'

/**
 * `plinth blueprint …` run as a child process (`node bin/plinth.js`) against a real instance, as a script
 * would: PLINTH_URL and PLINTH_TOKEN from the environment, what it prints and its exit code (docs/cli.md).
 * How each line is worded is in src/cli/*.test.ts; here is that the CLI and the API agree.
 */

let server: TestServer
let owner: Account
const dir = mkdtempSync(join(tmpdir(), 'plinth-cli-bp-'))

/** Runs the CLI with the instance's URL and (unless `env` says otherwise) the owner's token. */
const cli = (args: string[], env: Record<string, string> = {}): Promise<CliRun> =>
  runCli(args, { PLINTH_URL: server.url, PLINTH_TOKEN: owner.token, ...env })

/** Writes a file of the temporary directory and returns its path. */
function file(name: string, content: string | Uint8Array): string {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}

const notes = brick('collection id=notes', {
  name: '${params.prefix}_notes',
  accessPreset: 'private',
  fields: [{ name: 'title', type: 'text', required: true }],
})
const allNotes = brick('view id=all needs=notes', {
  name: 'All notes',
  collection: '${params.prefix}_notes',
  shared: true,
})
const app = documentOf([notes, allNotes])

const collectionNames = async (): Promise<string[]> =>
  (await server.request('GET', '/api/v1/collections', { token: owner.token })).body.data.map(
    (c: { name: string }) => c.name,
  )

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await server?.stop()
})

describe('plinth blueprint validate', () => {
  it('a sound document: one ok line, exit 0', async () => {
    const path = file('app.ebp.md', app)
    const ran = await cli(['blueprint', 'validate', path])
    expect(ran, ran.stderr).toEqual({
      code: 0,
      stdout: `${path}: ok: Help desk 1.0.0 (help-desk), 2 bricks\n`,
      stderr: '',
    })
  })

  it('a broken document: file:line: error code [brick] message, exit 1', async () => {
    const source = documentOf([brick('collection id=notes', '{ "name": "${params.prefix}_notes", BROKEN }')])
    const path = file('broken.ebp.md', source)
    const ran = await cli(['blueprint', 'validate', path])
    expect(ran.code).toBe(1)
    const lines = ran.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(
      new RegExp(`^${path}:${lineOf(source, 'BROKEN')}: error brick\\.invalid_json \\[notes\\] .+`),
    )
    expect(lines.at(-1)).toBe(`${path}: invalid: 1 error`)
  })

  it('a zip archive is sent as one; an archive refusal is an API error, exit 1', async () => {
    const zip = file('app.zip', zipBytes({ 'help-desk.ebp.md': utf8(app) }))
    const ran = await cli(['blueprint', 'validate', zip])
    expect(ran, ran.stderr).toEqual({
      code: 0,
      stdout: `${zip}: ok: Help desk 1.0.0 (help-desk), 2 bricks\n`,
      stderr: '',
    })

    const empty = file('empty.zip', zipBytes({ 'readme.txt': utf8('no document here') }))
    const refused = await cli(['blueprint', 'validate', empty])
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toMatch(/^error: invalid_request: .+ \(archive\.no_document\)\n$/)
  })

  it('--json prints the API answer as it came', async () => {
    const ran = await cli(['blueprint', 'validate', file('app.ebp.md', app), '--json'])
    expect(ran.code).toBe(0)
    const direct = await server.request('POST', '/api/v1/blueprints/validate', {
      token: owner.token,
      body: { source: app },
    })
    expect(JSON.parse(ran.stdout)).toEqual(direct.body)
  })

  it('without PLINTH_TOKEN: the 401 and where a credential goes, exit 1', async () => {
    const ran = await cli(['blueprint', 'validate', file('app.ebp.md', app)], { PLINTH_TOKEN: '' })
    expect(ran.code).toBe(1)
    expect(ran.stderr).toMatch(/^error: unauthorized: .+\nSet PLINTH_TOKEN/)
  })
})

describe('plinth blueprint plan', () => {
  it('prints the plan as a diff, exit 0, and writes nothing', async () => {
    const before = await collectionNames()
    const path = file('app.ebp.md', app)
    const ran = await cli(['blueprint', 'plan', path, '--param', 'prefix=nb'])
    expect(ran, ran.stderr).toEqual({
      code: 0,
      stdout: [
        'Plan for Help desk 1.0.0 (help-desk), new:',
        '+ CREATE collection notes',
        '+ CREATE view all',
        '2 CREATE: installable',
        '',
      ].join('\n'),
      stderr: '',
    })
    expect(await collectionNames()).toEqual(before)
  })

  it('a BLOCKED brick: its reason printed, exit 1', async () => {
    const escalating = documentOf([
      brick('role id=agents', { name: '${params.prefix}_agents' }),
      brick('grants id=g needs=agents', {
        role: '${params.prefix}_agents',
        grants: [{ resource: 'system/roles', action: 'update' }],
      }),
    ])
    const ran = await cli(['blueprint', 'plan', file('escalating.ebp.md', escalating)])
    expect(ran.code).toBe(1)
    expect(ran.stdout).toContain('! BLOCKED grants g: grant.escalates_installer\n')
    expect(ran.stdout).toMatch(/: not installable\n$/)
  })

  it('a parameter value the document refuses: the API error, exit 1', async () => {
    const ran = await cli(['blueprint', 'plan', file('app.ebp.md', app), '--param', 'prefix=Not-An-Identifier'])
    expect(ran.code).toBe(1)
    expect(ran.stderr).toMatch(/^error: invalid_request: .*prefix/)
  })
})

describe('plinth blueprint: usage', () => {
  it.each([
    { args: ['blueprint', 'plan', 'app.md', '--nope'], stderr: "Unknown option '--nope'" },
    { args: ['blueprint', 'validate'], stderr: 'Missing the blueprint file' },
    { args: ['blueprint', 'validate', join(dir, 'absent.md')], stderr: 'No such file' },
    { args: ['blueprint', 'explode'], stderr: 'Unknown command: blueprint explode' },
  ])('$args: exit 2, $stderr', async ({ args, stderr }) => {
    const ran = await cli(args)
    expect(ran.code).toBe(2)
    expect(ran.stderr).toContain(stderr)
    expect(ran.stdout).toBe('')
  })

  it('plinth --help and plinth blueprint --help list the commands', async () => {
    const top = await cli(['--help'])
    expect(top.code).toBe(0)
    for (const name of [
      'serve',
      'migrate',
      'blueprint',
      'types',
      'admin',
      'users',
      'keys',
      'backup',
      'restore',
      'doctor',
    ]) {
      expect(top.stdout).toMatch(new RegExp(`^  ${name} +\\S`, 'm'))
    }
    expect(top.stdout).toMatch(/^ {2}blueprint +validate, plan, install or export/m)
    const group = await cli(['blueprint', '--help'])
    expect(group.code).toBe(0)
    for (const command of ['validate <file>', 'plan <file>', 'install <file>', 'export']) {
      expect(group.stdout).toContain(`  ${command}`)
    }
  })
})

/** What the installs route needs to exist: until it is routed (the lead's install work) these cannot pass. */
describe('plinth blueprint install', () => {
  const desk = documentOf([
    brick('collection id=tickets', {
      name: '${params.prefix}_tickets',
      accessPreset: 'private',
      // Every member the live definition reads back, so a second plan finds nothing changed.
      fields: [{ name: 'title', type: 'text', required: true, unique: false, indexed: false }],
    }),
    brick('role id=agents', { name: '${params.prefix}_agents' }),
    brick('grants id=agent-grants needs=agents', {
      role: '${params.prefix}_agents',
      grants: [{ resource: 'system/files', action: 'read' }],
    }),
  ])

  it('bricks needing consent without --yes: the plan and their ids printed, nothing installed, exit 1', async () => {
    const before = await collectionNames()
    const ran = await cli(['blueprint', 'install', file('desk.ebp.md', desk), '--param', 'prefix=inst'])
    expect(ran.code).toBe(1)
    expect(ran.stdout).toContain('+ CREATE grants agent-grants [needs consent]\n')
    expect(ran.stderr).toBe(
      'Not installed: a brick needs consent (agent-grants). Review the plan, then run again with --yes to accept.\n',
    )
    expect(await collectionNames()).toEqual(before)
    const installs = await server.request('GET', '/api/v1/blueprints/installs', { token: owner.token })
    expect(installs.body.data).toEqual([])
  })

  it('with --yes: complete, every resource settled, exit 0; the project has them; planned again, all NOOP', async () => {
    const path = file('desk.ebp.md', desk)
    const ran = await cli(['blueprint', 'install', path, '--param', 'prefix=inst', '--yes'])
    expect(ran.code, ran.stderr + ran.stdout).toBe(0) // the output says which resource failed
    expect(ran.stdout).toMatch(/\nInstall \S+ of Help desk 1\.0\.0: complete\n/)
    for (const brickLine of ['CREATE collection tickets', 'CREATE role agents', 'CREATE grants agent-grants']) {
      expect(ran.stdout).toMatch(new RegExp(`\\n  settled ${brickLine}`))
    }
    expect(await collectionNames()).toContain('inst_tickets')
    const roles = await server.request('GET', '/api/v1/roles', { token: owner.token })
    expect(roles.body.data.map((r: { name: string }) => r.name)).toContain('inst_agents')

    const again = await cli(['blueprint', 'plan', path, '--param', 'prefix=inst'])
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toContain('= NOOP collection tickets\n= NOOP role agents\n= NOOP grants agent-grants\n')
  })

  it('a secret parameter: its value from PLINTH_SECRET_<name>, never printed; without it nothing is installed', async () => {
    const hooked = documentOf(
      [
        brick('collection id=hooked', {
          name: '${params.prefix}_hooked',
          accessPreset: 'private',
          fields: [{ name: 'title', type: 'text', required: true, unique: false, indexed: false }],
        }),
        brick('webhook id=hook needs=hooked', {
          name: '${params.prefix}_hook',
          collection: '${params.prefix}_hooked',
          events: ['record.create'],
          url: 'https://hooks.example.com/x',
          secret: '${params.hookSecret}',
        }),
      ],
      { params: `${namespaceParam}  - name: hookSecret\n    type: secret\n` },
    )
    const path = file('hooked.ebp.md', hooked)
    const args = ['blueprint', 'install', path, '--param', 'prefix=sec']
    const without = await cli(args)
    expect(without.code).toBe(1)
    expect(without.stdout).toContain('Missing secrets: hookSecret')
    expect(without.stderr).toMatch(/^error: invalid_request: .*hookSecret.*\nGive each secret value in the environment/)
    expect(await collectionNames()).not.toContain('sec_hooked')

    const value = 'hook-secret-value-5d1e'
    const ran = await cli(args, { PLINTH_SECRET_hookSecret: value })
    expect(ran.code, ran.stderr + ran.stdout).toBe(0)
    expect(ran.stdout).not.toContain('Missing secrets')
    expect(ran.stdout + ran.stderr).not.toContain(value)
    const hooks = await server.request('GET', '/api/v1/webhooks', { token: owner.token })
    expect(hooks.body.data).toContainEqual(expect.objectContaining({ name: 'sec_hook', hasSecret: true }))
    expect(hooks.text).not.toContain(value)
  })
})

describe('plinth blueprint export', () => {
  beforeAll(async () => {
    const collection = await server.request('POST', '/api/v1/collections', {
      token: owner.token,
      body: {
        name: 'exp_notes',
        fields: [{ name: 'title', type: 'text', required: true, unique: false, indexed: false }],
      },
    })
    expect(collection.status, collection.text).toBe(201)
    const role = await server.request('POST', '/api/v1/roles', { token: owner.token, body: { name: 'exp_readers' } })
    expect(role.status, role.text).toBe(201)
  })

  const exportArgs = [
    'blueprint',
    'export',
    '--namespace',
    'exp',
    '--collections',
    'exp_notes',
    '--roles',
    'exp_readers',
  ]

  it('-o writes the document; it validates, and plans back as ADOPT with nothing changed', async () => {
    const out = join(dir, 'exported.ebp.md')
    const ran = await cli([...exportArgs, '--id', 'notes-app', '-o', out])
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toBe('')
    const source = readFileSync(out, 'utf8')
    expect(ran.stderr).toBe(`Wrote ${out} (${Buffer.byteLength(source)} bytes)\n`)
    expect(source).toContain('id: notes-app')
    expect(source).toContain('${params.prefix}_notes')

    const validated = await cli(['blueprint', 'validate', out])
    expect(validated.code, validated.stdout).toBe(0)
    expect(validated.stdout).toMatch(new RegExp(`^${out}: ok: `))
    const planned = await cli(['blueprint', 'plan', out])
    expect(planned.code, planned.stdout + planned.stderr).toBe(0)
    const verdicts = planned.stdout.split('\n').filter((line) => /^[-+~=.!x?] /.test(line))
    expect(verdicts.length).toBeGreaterThan(1)
    for (const line of verdicts) expect(line).toMatch(/^~ ADOPT [a-z-]+ \S+( \[needs consent\])?$/)
  })

  it('to stdout by default; the API refusing the query is exit 1; --format is a usage error', async () => {
    const ran = await cli(exportArgs)
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toMatch(/^---\nformat: service-blueprint-v1\n/)

    const refused = await cli(['blueprint', 'export', '--collections', 'exp_notes'])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/^error: invalid_request: .*namespace/)
    const misspelt = await cli([...exportArgs, '--colections', 'x'])
    expect(misspelt.code).toBe(1)
    expect(misspelt.stderr).toMatch(/^error: invalid_request: .*colections/)

    const usage = await cli([...exportArgs, '--format', 'md'])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain('--format is not taken')
  })
})
