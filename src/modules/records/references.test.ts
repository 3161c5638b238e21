import { describe, expect, it } from 'vitest'
import { testPrincipal } from '../../../test/support/principals.js'
import type { FieldDef } from '../collections/index.js'
import type { Opened } from './context.js'
import { missingReferences } from './references.js'
import type { RecordStore } from './store.js'

const relation = (name: string, targetCollection: string, relationType: 'belongsTo' | 'hasMany'): FieldDef =>
  ({
    name,
    type: 'relation',
    required: false,
    relationConfig: { targetCollection, relationType, onDelete: 'set-null' },
  }) as FieldDef

/** An opened `posts` whose relation targets hold these active ids, and whose caller may read these files, counting the lookups. */
function opened(active: Record<string, string[]>, files: string[] = []) {
  const lookups: { collection: string; ids: readonly string[] }[] = []
  const fields = [
    relation('author', 'people', 'belongsTo'),
    relation('readers', 'people', 'hasMany'),
    relation('parent', 'posts', 'belongsTo'),
    { name: 'title', type: 'text' } as FieldDef,
    { name: 'cover', type: 'file' } as FieldDef,
  ]
  const targets = {
    async storeOf(_projectId: string, name: string) {
      if (!(name in active)) return null
      return {
        async activeIds(ids: readonly string[]) {
          lookups.push({ collection: name, ids })
          return new Set(ids.filter((id) => active[name]!.includes(id)))
        },
      } as unknown as RecordStore
    },
  }
  const principal = testPrincipal()
  const readableFiles = async (caller: unknown, ids: readonly string[]) => {
    expect(caller).toBe(principal)
    lookups.push({ collection: 'files', ids })
    return new Set(ids.filter((id) => files.includes(id)))
  }
  const value = {
    principal,
    collection: { name: 'posts', projectId: 'p' },
    shape: { stored: fields, byName: new Map(fields.map((f) => [f.name, f])) },
    targets,
    readableFiles,
  } as unknown as Opened
  return { value, lookups }
}

describe('missingReferences', () => {
  it('checks every write in one lookup per relation field, with each id once', async () => {
    const { value, lookups } = opened({ people: ['ada', 'bob'], posts: ['p1'] })
    const result = await missingReferences(value, [
      { row: { author: 'ada', readers: JSON.stringify(['ada', 'x']) } },
      { row: { author: 'ghost', readers: JSON.stringify(['bob']), parent: 'p1' } },
      { row: { author: 'ada', title: 'no lists' } },
      { row: { id: 'me', parent: 'me' } },
    ])
    expect(result).toEqual([
      { kind: 'relation', field: 'readers', missing: ['x'] },
      { kind: 'relation', field: 'author', missing: ['ghost'] },
      null,
      null,
    ])
    // The second write is refused already: neither its readers nor its parent are asked for, and the
    // fourth points at itself; so posts is not asked at all.
    expect(lookups).toEqual([
      { collection: 'people', ids: ['ada', 'ghost'] },
      { collection: 'people', ids: ['ada', 'x'] },
    ])
  })

  it('asks nothing when the writes hold no relation values', async () => {
    const { value, lookups } = opened({ people: [] })
    expect(await missingReferences(value, [{ row: { title: 'x', author: null } }, { row: { readers: '[]' } }])).toEqual(
      [null, null],
    )
    expect(lookups).toEqual([])
  })

  it('an update is checked only for the ids it adds', async () => {
    const { value, lookups } = opened({ people: ['bob'] })
    const before = { author: 'gone', readers: ['gone'] }
    expect(
      await missingReferences(value, [{ row: { author: 'gone', readers: JSON.stringify(['gone', 'bob']) }, before }]),
    ).toEqual([null])
    expect(lookups).toEqual([{ collection: 'people', ids: ['bob'] }])
  })

  it('a target collection that no longer exists has no records', async () => {
    const { value } = opened({})
    expect(await missingReferences(value, [{ row: { author: 'ada' } }])).toEqual([
      { kind: 'relation', field: 'author', missing: ['ada'] },
    ])
  })

  it('a file field takes only files the caller may read, asked once for all the writes', async () => {
    const { value, lookups } = opened({}, ['mine'])
    const result = await missingReferences(value, [
      { row: { cover: 'mine' } },
      { row: { cover: 'hidden' } },
      { row: { cover: null } },
      { row: { title: 'none' } },
      { row: { cover: 'mine' } },
    ])
    expect(result).toEqual([null, { kind: 'file', field: 'cover', missing: ['hidden'] }, null, null, null])
    expect(lookups).toEqual([{ collection: 'files', ids: ['mine', 'hidden'] }])
  })

  it('an update is not asked about the file it held already', async () => {
    const { value, lookups } = opened({}, [])
    expect(await missingReferences(value, [{ row: { cover: 'theirs' }, before: { cover: 'theirs' } }])).toEqual([null])
    expect(lookups).toEqual([])
    expect(await missingReferences(value, [{ row: { cover: 'other' }, before: { cover: 'theirs' } }])).toEqual([
      { kind: 'file', field: 'cover', missing: ['other'] },
    ])
  })
})
