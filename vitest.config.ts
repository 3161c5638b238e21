import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  // Tests import the SDK from its source in this checkout (as tsconfig.json's paths), not a built copy.
  resolve: { alias: { '@plinth/client': fileURLToPath(new URL('./packages/client/src/index.ts', import.meta.url)) } },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'tools/**/*.test.ts'],
    pool: 'forks',
    // A worker per core (vitest's default keeps one core back): most files spend their time waiting on
    // their servers, the network and the database, so every core is worth a file. Each file has its own
    // data directory, database and Redis prefix (test/support/harness.ts). VITEST_MAX_WORKERS overrides.
    maxWorkers: Math.max(2, availableParallelism()),
    // Files share their worker's module graph: an API file spent 4.5 of its 4.9 s importing the app, once per
    // file. Sharing is safe because nothing test-visible lives at module level: each file boots its own app
    // with its own data directory, database and Redis prefix, and config is read from what the file passes.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Timings are never asserted; retries would only hide flakiness.
    retry: 0,
  },
})
