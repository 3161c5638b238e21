import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from 'kysely'
import { translateDbError } from './translate-error.js'

/**
 * Wraps a Kysely dialect so that every driver error leaves the database layer already translated
 * (see translate-error.ts). Stores and services therefore only ever see AppError.
 */
export function translatingDialect(inner: Dialect): Dialect {
  return {
    createAdapter: () => inner.createAdapter(),
    createQueryCompiler: () => inner.createQueryCompiler(),
    createIntrospector: (db) => inner.createIntrospector(db),
    createDriver: () => new TranslatingDriver(inner.createDriver()),
  }
}

type CompileQuery = QueryCompiler['compileQuery']

class TranslatingDriver implements Driver {
  readonly #inner: Driver
  readonly #originals = new WeakMap<DatabaseConnection, DatabaseConnection>()
  readonly #wrappers = new WeakMap<DatabaseConnection, DatabaseConnection>()

  constructor(inner: Driver) {
    this.#inner = inner
  }

  init(): Promise<void> {
    return guard(() => this.#inner.init())
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const original = await guard(() => this.#inner.acquireConnection())
    // Drivers hand out the same connection objects again (SQLite has one): wrap each once.
    let wrapped = this.#wrappers.get(original)
    if (!wrapped) {
      wrapped = {
        // better-sqlite3 throws synchronously, so await inside a try rather than chaining .catch.
        executeQuery: async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
          try {
            return await original.executeQuery<R>(query)
          } catch (err) {
            rethrow(err)
          }
        },
        streamQuery: <R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> =>
          translateStream(original.streamQuery<R>(query, chunkSize)),
      }
      this.#wrappers.set(original, wrapped)
      this.#originals.set(wrapped, original)
    }
    return wrapped
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return guard(() => this.#inner.beginTransaction(this.#original(connection), settings))
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return guard(() => this.#inner.commitTransaction(this.#original(connection)))
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return guard(() => this.#inner.rollbackTransaction(this.#original(connection)))
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: CompileQuery): Promise<void> {
    await guard(async () => this.#inner.savepoint?.(this.#original(connection), name, compile))
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: CompileQuery): Promise<void> {
    await guard(async () => this.#inner.rollbackToSavepoint?.(this.#original(connection), name, compile))
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: CompileQuery): Promise<void> {
    await guard(async () => this.#inner.releaseSavepoint?.(this.#original(connection), name, compile))
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.#inner.releaseConnection(this.#original(connection))
  }

  destroy(): Promise<void> {
    return this.#inner.destroy()
  }

  #original(connection: DatabaseConnection): DatabaseConnection {
    return this.#originals.get(connection) ?? connection
  }
}

function rethrow(err: unknown): never {
  throw translateDbError(err)
}

async function guard<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (err) {
    rethrow(err)
  }
}

async function* translateStream<R>(
  stream: AsyncIterableIterator<QueryResult<R>>,
): AsyncIterableIterator<QueryResult<R>> {
  try {
    yield* stream
  } catch (err) {
    rethrow(err)
  }
}
