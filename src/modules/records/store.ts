import { sql, type CompiledQuery, type Expression, type Kysely, type SqlBool } from 'kysely'
import { runCompiled, type DbHandle } from '../../lib/db/index.js'
import { compileFilter, type FieldResolver, type ResolvedFilterNode } from '../../lib/filter/index.js'
import { documentReturning, documentSet, documentSource, packDocument, type FieldDef } from '../collections/index.js'

export type Row = Record<string, unknown>

// Ids per `in (…)` list when checking that relation targets exist: a whole hasMany list (at most 1000)
// is one statement, and both dialects' parameter limits are far away.
const idLookupChunk = 5000

/**
 * SQL over one collection's table. The table name is the collection's (checked at creation); every
 * condition arrives compiled from a filter AST through the collection's resolver, so no value and no
 * unchecked identifier reaches the SQL text.
 *
 * With `documentFields` (a kv collection, decision 035) the fields live in one JSON document: reads go
 * through a derived table that shows each field as a column (document-table.ts), writes pack the fields
 * into the document, and a write's row scope (which names fields) picks its ids from the derived table.
 */
export function createRecordStore(
  handle: DbHandle,
  table: string,
  resolver: FieldResolver,
  documentFields: readonly FieldDef[] | null = null,
) {
  const db = handle.db as Kysely<Record<string, Row>>
  const document = documentFields
    ? {
        source: documentSource(handle, table, documentFields),
        returning: documentReturning(handle.kind, documentFields),
        fields: documentFields,
      }
    : null
  // The derived table stands where the table's name would (Kysely takes either).
  const from = () => (document ? db.selectFrom(document.source as unknown as string) : db.selectFrom(table))
  const toStored = (row: Row): Row => (document ? packDocument(document.fields, row) : row)
  const toSet = (set: Row): Row => (document ? documentSet(handle.kind, document.fields, set) : set)
  const unscopedById = new Map<boolean, CompiledQuery<Row>>()
  // Writes of one shape (the same columns, no row scope) reuse their SQL; values are bound per call.
  const writes = new Map<string, CompiledQuery<Row>>()
  // Compiling with the real values lets the connection's plugins see them; a reused query skips them,
  // so the one value conversion they make (SQLite's booleans) is done here.
  const bind = handle.kind === 'sqlite' ? (v: unknown) => (typeof v === 'boolean' ? Number(v) : v) : (v: unknown) => v

  const first = (query: CompiledQuery<Row>): Promise<Row | undefined> => runCompiled(db, query).then((rows) => rows[0])

  function reuse(key: string, build: () => CompiledQuery<Row>, parameters: unknown[]): Promise<Row | undefined> {
    // Kysely leaves undefined values out of the statement, which would shift the parameters.
    if (parameters.includes(undefined)) return first(build())
    let compiled = writes.get(key)
    if (!compiled) {
      if (writes.size >= 256) writes.clear()
      compiled = build()
      writes.set(key, compiled)
      return first(compiled)
    }
    return first({ ...compiled, parameters: parameters.map(bind) })
  }

  /**
   * The compiled row scope (null: every row), and soft-deleted rows excluded unless asked for. `through` is
   * the collection's resolver but for a list's plan choice (list-plan.ts), which marks some columns unindexed.
   */
  function where(
    scope: ResolvedFilterNode | null,
    includeDeleted: boolean,
    through: FieldResolver = resolver,
  ): Expression<SqlBool>[] {
    const conditions: Expression<SqlBool>[] = []
    if (!includeDeleted) conditions.push(sql<SqlBool>`deleted_at is null`)
    if (scope) conditions.push(compileFilter(scope, through, handle.kind))
    return conditions
  }

  /** `where` for an UPDATE or DELETE of the table itself: a document table's scope is tested on the derived table. */
  function writeWhere(scope: ResolvedFilterNode | null, includeDeleted: boolean): Expression<SqlBool>[] {
    if (!document || !scope) return where(scope, includeDeleted)
    const inScope = from()
      .select('id')
      .where(compileFilter(scope, resolver, handle.kind))
    return [...where(null, includeDeleted), sql<SqlBool>`${sql.ref('id')} in (${inScope})`]
  }

  return {
    where,
    writeWhere,
    toSet,
    /** The columns an UPDATE … RETURNING answers, as a read shows them (`*` but for a document table). */
    returning: document ? document.returning : null,

    /** One row by id within the scope, or undefined. */
    async byId(id: string, scope: ResolvedFilterNode | null, includeDeleted: boolean): Promise<Row | undefined> {
      if (!scope) {
        // The commonest read has a fixed shape: build its SQL once and bind only the id.
        let compiled = unscopedById.get(includeDeleted)
        if (!compiled) {
          let shapeQuery = from().selectAll().where('id', '=', '')
          for (const condition of where(null, includeDeleted)) shapeQuery = shapeQuery.where(condition)
          compiled = shapeQuery.compile()
          unscopedById.set(includeDeleted, compiled)
        }
        return first({ ...compiled, parameters: [id] })
      }
      let query = from().selectAll().where('id', '=', id)
      for (const condition of where(scope, includeDeleted)) query = query.where(condition)
      return first(query.compile())
    },

    /** Rows by ids within the scope (for expand and computed fields); at most `ids.length` rows. */
    async byIds(ids: readonly string[], scope: ResolvedFilterNode | null): Promise<Row[]> {
      if (ids.length === 0) return []
      let query = from()
        .selectAll()
        .where('id', 'in', [...ids])
      for (const condition of where(scope, false)) query = query.where(condition)
      return runCompiled(db, query.compile())
    },

    /** Which of `ids` are rows of the table that are not soft-deleted, whatever any caller's scope (relation checks). */
    async activeIds(ids: readonly string[]): Promise<Set<string>> {
      const found = new Set<string>()
      for (let i = 0; i < ids.length; i += idLookupChunk) {
        const slice = ids.slice(i, i + idLookupChunk)
        const rows = await from()
          .select('id')
          .where('id', 'in', slice)
          .where(sql<SqlBool>`deleted_at is null`)
          .execute()
        for (const row of rows) found.add(String(row.id))
      }
      return found
    },

    /** Inserts one row and returns it as stored. Throws already_exists on a duplicate id or unique value. */
    async insert(row: Row): Promise<Row> {
      const values = toStored(row)
      const keys = Object.keys(values)
      const build = () => {
        const insert = db.insertInto(table).values(values)
        return (
          document ? insert.returning(document.returning as never) : insert.returningAll()
        ).compile() as CompiledQuery<Row>
      }
      const stored = await reuse(
        `insert:${keys.join(',')}`,
        build,
        keys.map((k) => values[k]),
      )
      return stored!
    },

    /**
     * Updates one row inside the scope, and only at `version` when given: the check is part of the UPDATE,
     * so of several writers holding one version exactly one commits. Returns the new row, or undefined when
     * no row matched (missing, hidden, deleted, or another version).
     */
    async update(
      id: string,
      set: Row,
      scope: ResolvedFilterNode | null,
      version: number | null,
      includeDeleted = false,
    ): Promise<Row | undefined> {
      if (document) {
        // The document's new value is an expression over its old one: built per call, never re-bound.
        let query = db
          .updateTable(table)
          .set({ ...toSet(set), _version: sql`_version + 1` })
          .where('id', '=', id)
        for (const condition of writeWhere(scope, includeDeleted)) query = query.where(condition)
        if (version !== null) query = query.where('_version', '=', version)
        return first(query.returning(document.returning as never).compile() as CompiledQuery<Row>)
      }
      const keys = Object.keys(set)
      const build = () => {
        let query = db
          .updateTable(table)
          .set({ ...set, _version: sql`_version + 1` })
          .where('id', '=', id)
        for (const condition of where(null, includeDeleted)) query = query.where(condition)
        if (version !== null) query = query.where('_version', '=', version)
        return query.returningAll().compile()
      }
      if (!scope) {
        const key = `update:${keys.join(',')}:${includeDeleted}:${version !== null}`
        return reuse(key, build, [...keys.map((k) => set[k]), id, ...(version !== null ? [version] : [])])
      }
      let query = db
        .updateTable(table)
        .set({ ...set, _version: sql`_version + 1` })
        .where('id', '=', id)
      for (const condition of where(scope, includeDeleted)) query = query.where(condition)
      if (version !== null) query = query.where('_version', '=', version)
      return first(query.returningAll().compile())
    },

    /** Deletes one row inside the scope (soft-deleted rows included); returns it, or undefined. */
    async remove(id: string, scope: ResolvedFilterNode | null): Promise<Row | undefined> {
      let query = db.deleteFrom(table).where('id', '=', id)
      for (const condition of writeWhere(scope, true)) query = query.where(condition)
      return first(
        (document
          ? query.returning(document.returning as never)
          : query.returningAll()
        ).compile() as CompiledQuery<Row>,
      )
    },

    /** Rows of this table whose `column` holds the id (belongsTo) or lists it (hasMany), for onDelete. */
    async referencing(column: string, id: string, many: boolean, includeDeleted = false): Promise<Row[]> {
      const condition = many
        ? compileFilter(
            { kind: 'compare', field: [column], op: 'contains', value: { kind: 'literal', value: id } },
            resolver,
            handle.kind,
          )
        : sql<SqlBool>`${sql.ref(column)} = ${id}`
      let query = from().selectAll().where(condition)
      if (!includeDeleted) query = query.where(sql<SqlBool>`deleted_at is null`)
      return query.limit(10_000).execute()
    },

    /** A query builder on the table (a document table's derived table), for the list planner. */
    selectFrom: from,

    /** For the batch inserter of imports: a document table's source, RETURNING list and packing; null for a column table. */
    bulkDocument: document ? { source: document.source, returning: document.returning, pack: toStored } : null,
  }
}

export type RecordStore = ReturnType<typeof createRecordStore>
