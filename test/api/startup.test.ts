import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import { createApp } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import { principals } from '../../src/lib/principal.js'
import { createTestDatabase, testDatabaseUrl } from '../support/postgres.js'

const silent = { write: () => {} }
let cleanup: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const c of cleanup.reverse()) await c()
  cleanup = []
})

async function freshConfig(): Promise<Config> {
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-startup-'))
  cleanup.push(async () => rmSync(dataDir, { recursive: true, force: true }))
  const env: Record<string, string> = { DATA_DIR: dataDir, PORT: '0' }
  const admin = testDatabaseUrl()
  if (admin) {
    const database = await createTestDatabase(admin)
    cleanup.push(database.drop)
    env.DATABASE_URL = database.url
    env.SECRET_KEY = randomBytes(32).toString('hex')
  }
  return loadConfig(env)
}

describe('first start', () => {
  it('creates the default project and its database, and keeps it across restarts', async () => {
    const config = await freshConfig()
    const first = await createApp(config, { logDestination: silent })
    const project = first.defaultProject
    expect(project).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      isDefault: true,
      name: 'Default project',
    })
    if (config.database.kind === 'sqlite') {
      expect(existsSync(join(config.dataDir, 'projects', `${project.id}.db`))).toBe(true)
    } else {
      const schemas = await sql<{ n: string }>`select schema_name as n from information_schema.schemata`.execute(
        first.registry.system.db,
      )
      expect(schemas.rows.map((r) => r.n)).toEqual(expect.arrayContaining(['plinth', `project_${project.id}`]))
    }
    await first.close()

    const second = await createApp(config, { logDestination: silent })
    expect(second.defaultProject.id).toBe(project.id)
    expect(await second.projects.listAcrossProjects()).toHaveLength(1)
    await second.close()
  })

  // Scale-out is a PostgreSQL deployment; an embedded DATA_DIR belongs to one instance (and two SQLite
  // connections to one file in one process would block each other's synchronous busy wait).
  it.runIf(testDatabaseUrl())(
    'two instances starting together on a fresh database agree on one default project',
    async () => {
      const config = await freshConfig()
      const [a, b] = await Promise.all([
        createApp(config, { logDestination: silent }),
        createApp(config, { logDestination: silent }),
      ])
      cleanup.push(
        () => a.close(),
        () => b.close(),
      )
      expect(a.defaultProject.id).toBe(b.defaultProject.id)
      expect(await a.projects.listAcrossProjects()).toHaveLength(1)
    },
  )

  it('creates further projects, each with its own database', async () => {
    const config = await freshConfig()
    const app = await createApp(config, { logDestination: silent })
    cleanup.push(() => app.close())
    // Creating a project is a super_admin's (instance/projects:create); the service checks it itself.
    const operator = principals.user(
      {
        homeProjectId: app.defaultProject.id,
        userId: 'operator',
        roleId: 'none',
        roleName: 'super_admin',
        superAdmin: true,
      },
      { id: 'session', expiresAt: 2_000_000_000 },
    )
    await expect(app.projects.create(principals.system(app.defaultProject.id), 'By a sweep')).rejects.toMatchObject({
      code: 'forbidden',
    })
    const extra = await app.projects.create(operator, '  Second  ')
    expect(extra).toMatchObject({ name: 'Second', isDefault: false })
    expect((await app.projects.listAcrossProjects()).map((p) => p.id)).toEqual([app.defaultProject.id, extra.id])
    const a = await app.registry.get(app.defaultProject.id)
    const b = await app.registry.get(extra.id)
    await a.db.schema.createTable('only_a').addColumn('id', 'text').execute()
    await expect(b.db.selectFrom('only_a').selectAll().execute()).rejects.toMatchObject({ code: 'internal' })
    await expect(app.projects.create(operator, '   ')).rejects.toMatchObject({ code: 'invalid_request' })
    await expect(app.projects.get('f'.repeat(32))).rejects.toMatchObject({ code: 'not_found' })
  })
})
