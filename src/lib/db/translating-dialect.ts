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

  constructor(inner: Driver) {
    this.#inner = inner
  }

  init(): Promise<void> {
    return this.#inner.init().catch(rethrow)
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const original = await this.#inner.acquireConnection().catch(rethrow)
    const wrapped: DatabaseConnection = {
      executeQuery: <R>(query: CompiledQuery): Promise<QueryResult<R>> =>
        original.executeQuery<R>(query).catch(rethrow),
      streamQuery: <R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> =>
        translateStream(original.streamQuery<R>(query, chunkSize)),
    }
    this.#originals.set(wrapped, original)
    return wrapped
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.#inner.beginTransaction(this.#original(connection), settings).catch(rethrow)
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.commitTransaction(this.#original(connection)).catch(rethrow)
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.rollbackTransaction(this.#original(connection)).catch(rethrow)
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: CompileQuery): Promise<void> {
    await this.#inner.savepoint?.(this.#original(connection), name, compile).catch(rethrow)
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: CompileQuery): Promise<void> {
    await this.#inner.rollbackToSavepoint?.(this.#original(connection), name, compile).catch(rethrow)
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: CompileQuery): Promise<void> {
    await this.#inner.releaseSavepoint?.(this.#original(connection), name, compile).catch(rethrow)
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

async function* translateStream<R>(stream: AsyncIterableIterator<QueryResult<R>>): AsyncIterableIterator<QueryResult<R>> {
  try {
    yield* stream
  } catch (err) {
    rethrow(err)
  }
}
