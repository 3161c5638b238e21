import type { Kysely } from 'kysely'

/**
 * The SQL every project-scoped resource table repeats (rows keyed by `id`, every query also by
 * `project_id`, so another project's id is simply not found): a page in a stable order with its total,
 * one row, insert, update and delete. Each module's store spreads it and adds what is its own.
 */
export function projectRows<Row extends { id: string; project_id: string }>(systemDb: Kysely<any>, table: string) {
  // Untyped inside: the table is named at run time; rows are typed at the edge.
  const db = systemDb
  const scoped = (projectId: string) => db.selectFrom(table).where('project_id', '=', projectId)
  return {
    /** A page ordered by `order` then id; `where` narrows it (equality per column). */
    async list(
      projectId: string,
      page: number,
      limit: number,
      order: readonly (keyof Row & string)[],
      where: Partial<Record<keyof Row & string, string>> = {},
    ): Promise<{ rows: Row[]; total: number }> {
      let base = scoped(projectId)
      for (const [column, value] of Object.entries(where))
        if (value !== undefined) base = base.where(column, '=', value)
      let rows = base.selectAll()
      for (const column of [...order, 'id']) rows = rows.orderBy(column)
      const [found, count] = await Promise.all([
        rows
          .limit(limit)
          .offset((page - 1) * limit)
          .execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst(),
      ])
      return { rows: found as Row[], total: Number((count as { n?: unknown } | undefined)?.n ?? 0) }
    },
    async byId(projectId: string, id: string): Promise<Row | undefined> {
      return (await scoped(projectId).selectAll().where('id', '=', id).executeTakeFirst()) as Row | undefined
    },
    async insert(row: Row): Promise<void> {
      await db
        .insertInto(table)
        .values(row as never)
        .execute()
    },
    /** False when the row is gone. */
    async update(projectId: string, id: string, changes: Partial<Row>): Promise<boolean> {
      const result = await db
        .updateTable(table)
        .set(changes as never)
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
    /** False when there was no such row. */
    async delete(projectId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom(table)
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },
  }
}
