import { afterEach, describe, expect, it } from 'vitest'
import type { Kysely } from 'kysely'
import { dialects, openFixture, type DialectFixture } from '../../../test/support/dialects.js'
import { runMigrations } from '../../lib/db/index.js'
import { ensureSchema } from '../../lib/db/postgres.js'
import { systemMigrations } from './index.js'

const at = systemMigrations.findIndex((m) => m.name === '0024-flows-published-by')
const before = systemMigrations.slice(0, at)

let fixture: DialectFixture | null = null
afterEach(async () => {
  await fixture?.close()
  fixture = null
})

/** The system database as the server opens it: on PostgreSQL, scoped to its own schema. */
async function systemDb(kind: 'sqlite' | 'postgres'): Promise<Kysely<any>> {
  fixture = await openFixture(kind)
  if (kind === 'sqlite') return fixture.db
  await ensureSchema(fixture.db, 'plinth')
  return fixture.db.withSchema('plinth')
}

function flowRow(id: string, publishedVersion: number | null) {
  return {
    id,
    project_id: 'p1',
    slug: id,
    name: id,
    description: '',
    icon: '',
    color: '',
    status: publishedVersion === null ? 'draft' : 'active',
    trigger_type: 'manual',
    trigger_config: '{}',
    operations: '[]',
    options: '{}',
    collections: '[]',
    created_by: null,
    run_as: 'triggering_user',
    current_version: 2,
    published_version: publishedVersion,
    webhook_token: `token-${id}`,
    created_at: 1,
    updated_at: 1,
  }
}

describe.each(dialects())('migration 0024 (flows.published_by) on %s', (kind) => {
  it('gives an existing published flow the author of its published version, and an unpublished one none', async () => {
    const db = await systemDb(kind)
    await runMigrations(db, kind, before)
    await db
      .insertInto('projects')
      .values({ id: 'p1', name: 'P', is_default: false, created_at: 1, updated_at: 1 })
      .execute()
    await db
      .insertInto('flows')
      .values([flowRow('published', 1), flowRow('draft', null)])
      .execute()
    const version = (v: number, by: string) => ({
      flow_id: 'published',
      version: v,
      project_id: 'p1',
      snapshot: '{}',
      change_summary: '',
      created_by: by,
      created_at: v,
    })
    // The author of version 2 is not the one whose version runs.
    await db
      .insertInto('flow_versions')
      .values([version(1, 'u-author'), version(2, 'u-later')])
      .execute()

    expect(await runMigrations(db, kind, systemMigrations.slice(0, at + 1))).toEqual(['0024-flows-published-by'])

    const rows = await db.selectFrom('flows').select(['id', 'published_by']).orderBy('id').execute()
    expect(rows).toEqual([
      { id: 'draft', published_by: null },
      { id: 'published', published_by: 'u-author' },
    ])
  })
})
