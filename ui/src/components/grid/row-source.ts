// The grid's rows: a sparse array as long as the list, filled block by block as the viewport asks for them.
// A block that follows a row whose cursor is known is read by cursor (keyset); one reached by a jump (the
// scrollbar dragged far down) is read in page mode, whose offsets are the same as long as the local list
// mirrors the server's (the realtime changes below are applied the way the server applied them).
import type { CollectionClient, ListPage } from '@plinth/client'
import type { Row } from './fields.js'

export const blockSize = 100
const concurrency = 3

export interface ViewQuery {
  filter?: string | undefined
  search?: string | undefined
  sortBy: string
  includeDeleted: boolean
  expand: readonly string[]
}

export class RowSource {
  rows: (Row | undefined)[] = []
  /** -1 until counted. */
  total = -1
  problem: unknown = null
  private readonly cursorAfter = new Map<string, string>()
  private readonly inFlight = new Set<number>()
  private wanted: number[] = []
  private closed = false
  private readonly abort = new AbortController()

  constructor(
    private readonly records: CollectionClient<Record<string, unknown>>,
    readonly query: ViewQuery,
    private readonly changed: () => void,
  ) {}

  private options() {
    return {
      filter: this.query.filter,
      search: this.query.search || undefined,
      sortBy: this.query.sortBy,
      includeDeleted: this.query.includeDeleted || undefined,
      expand: this.query.expand.length > 0 ? this.query.expand : undefined,
      limit: blockSize,
      signal: this.abort.signal,
    }
  }

  /** Reads the first block (by cursor) and the count (one page-mode row). */
  async start(): Promise<void> {
    try {
      const [first, counted] = await Promise.all([
        this.records.list({ ...this.options(), cursor: '' }),
        this.records.list({ ...this.options(), page: 1, limit: 1, expand: undefined }),
      ])
      if (this.closed) return
      this.total = counted.total
      this.rows = new Array<Row | undefined>(this.total)
      this.place(0, first)
    } catch (err) {
      if (this.closed) return
      this.problem = err
    }
    this.changed()
  }

  close(): void {
    this.closed = true
    this.abort.abort()
  }

  /** Asks for the rows from..to (inclusive); the blocks they need are read, the nearest first. */
  ensure(from: number, to: number): void {
    if (this.total < 0) return
    const last = Math.min(to, this.total - 1)
    const blocks: number[] = []
    for (let b = Math.floor(Math.max(0, from) / blockSize); b * blockSize <= last; b++) {
      if (this.inFlight.has(b)) continue
      const end = Math.min((b + 1) * blockSize, this.total)
      for (let i = b * blockSize; i < end; i++) {
        if (this.rows[i] === undefined) {
          blocks.push(b)
          break
        }
      }
    }
    this.wanted = blocks
    this.pump()
  }

  private pump(): void {
    while (this.inFlight.size < concurrency && this.wanted.length > 0) {
      const block = this.wanted.shift()!
      this.inFlight.add(block)
      void this.load(block).finally(() => {
        this.inFlight.delete(block)
        this.pump()
      })
    }
  }

  private async load(block: number): Promise<void> {
    const start = block * blockSize
    const before = start > 0 ? this.rows[start - 1] : undefined
    const cursor = before ? this.cursorAfter.get(before.id) : undefined
    try {
      const page =
        cursor !== undefined
          ? await this.records.list({ ...this.options(), cursor })
          : await this.records.list({ ...this.options(), page: block + 1 })
      if (this.closed) return
      this.place(start, page)
      this.changed()
    } catch (err) {
      if (this.closed) return
      this.problem = err
      this.changed()
    }
  }

  private place(start: number, page: ListPage<Record<string, unknown>>): void {
    const data = page.data as unknown as Row[]
    data.forEach((row, i) => {
      if (start + i < this.rows.length) this.rows[start + i] = row
    })
    const last = data[data.length - 1]
    if (last && page.cursors?.next) this.cursorAfter.set(last.id, page.cursors.next)
  }

  indexOf(id: string): number {
    const rows = this.rows
    for (let i = 0; i < rows.length; i++) if (rows[i]?.id === id) return i
    return -1
  }

  /** Replaces a row (a save, or the server's version after a conflict). */
  replace(index: number, row: Row): void {
    this.rows[index] = row
    this.changed()
  }

  /** A record the stream says changed: merged in place, keeping expansions of relations it still points at. */
  applyUpdate(record: Row, relationFields: readonly string[]): boolean {
    const index = this.indexOf(record.id)
    if (index < 0) return false
    const old = this.rows[index]!
    if (record._version < old._version) return true
    const merged = mergeKeepingExpansions(old, record, relationFields)
    if (merged.deleted_at !== null && !this.query.includeDeleted) return this.remove(index)
    this.rows[index] = merged
    this.changed()
    return true
  }

  /** A record new to the view: at the top (newest first), or counted at the end (oldest first). */
  applyCreate(record: Row, where: 'top' | 'end'): void {
    if (this.total < 0 || this.indexOf(record.id) >= 0) return
    if (where === 'top') this.rows.unshift(record)
    else this.rows.push(record)
    this.total += 1
    this.changed()
  }

  /** A record gone from the view: removed, or marked deleted when deleted rows are shown. */
  applyDelete(id: string, at: number): void {
    const index = this.indexOf(id)
    if (index < 0) return
    if (this.query.includeDeleted) {
      this.rows[index] = { ...this.rows[index]!, deleted_at: at }
      this.changed()
    } else this.remove(index)
  }

  private remove(index: number): true {
    this.rows.splice(index, 1)
    this.total -= 1
    this.changed()
    return true
  }
}

/** A newer record over an older one, keeping the expanded relations it still points at (a write answers ids). */
export function mergeKeepingExpansions(old: Row, record: Row, relationFields: readonly string[]): Row {
  const merged: Row = { ...old, ...record }
  for (const name of relationFields) {
    const before = old[name]
    if (before && typeof before === 'object' && idsOf(before) === idsOf(record[name])) merged[name] = before
  }
  return merged
}

function idsOf(value: unknown): string {
  if (Array.isArray(value)) return value.map(idsOf).join(',')
  if (value && typeof value === 'object') return String((value as { id?: unknown }).id)
  return String(value)
}
