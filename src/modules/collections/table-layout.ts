/**
 * Where a table keeps its fields: a column each (`d1`, `remote`, `durable_object`), or keys of one JSON
 * document (`kv`, document-table.ts), whose indexes are expression indexes over the same expressions reads use.
 */
export type TableLayout = 'columns' | 'document'
