// Writes docs/operations.md from the operations registry (`npm run docs:operations`); with --check, only
// says whether the committed page is current (exit 1 when stale). The test docs-page.test.ts checks it too.
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { operationCatalog } from '../src/modules/operations/index.js'
import { renderOperationsPage } from '../src/modules/operations/docs-page.js'

const target = fileURLToPath(new URL('../docs/operations.md', import.meta.url))
const page = renderOperationsPage(operationCatalog)
if (process.argv.includes('--check')) {
  let current = ''
  try {
    current = readFileSync(target, 'utf8')
  } catch {
    // missing: stale
  }
  if (current !== page) {
    console.error('docs/operations.md is stale: run npm run docs:operations')
    process.exit(1)
  }
  console.log('docs/operations.md is current')
} else {
  writeFileSync(target, page)
  console.log(`docs/operations.md: ${operationCatalog.length} operations`)
}
