/** A signed-in session as the client keeps it. */
export interface StoredSession {
  token: string
  /** ISO 8601, when the server said; the client does not refresh on its own before it. */
  expiresAt?: string | undefined
}

/** Where the session token lives between calls (and, in a browser, between page loads). */
export interface TokenStore {
  get(): StoredSession | undefined
  set(session: StoredSession | undefined): void
}

/** Kept in memory: gone when the process or page ends. The default. */
export function memoryTokenStore(): TokenStore {
  let current: StoredSession | undefined
  return {
    get: () => current,
    set: (session) => {
      current = session
    },
  }
}

interface StorageLike {
  getItem(key: string): string | null
  setItem(key: string, value: string): void
  removeItem(key: string): void
}

/** Kept in `localStorage` (or any Storage) under one key, so a browser session survives a reload. */
export function localStorageTokenStore(key = 'plinth.session', storage?: StorageLike): TokenStore {
  const store = storage ?? (globalThis as { localStorage?: StorageLike }).localStorage
  if (!store) throw new Error('localStorageTokenStore: no localStorage here; pass a Storage, or use memoryTokenStore()')
  return {
    get() {
      const raw = store.getItem(key)
      if (!raw) return undefined
      try {
        const parsed = JSON.parse(raw) as StoredSession
        return typeof parsed.token === 'string' ? parsed : undefined
      } catch {
        return undefined
      }
    },
    set(session) {
      if (session) store.setItem(key, JSON.stringify(session))
      else store.removeItem(key)
    },
  }
}
