// npm run bench [name…] [--rows N]: each benchmark runs its baseline in the same run and prints the ratio.
import { benchAdminUi } from './admin-ui.js'
import { benchBlueprints } from './blueprints.js'
import { benchDataTools } from './data-tools.js'
import { benchExpressions } from './expressions.js'
import { benchFiles } from './files.js'
import { benchFlows } from './flows.js'
import { benchHealth } from './health.js'
import { benchRealtime } from './realtime.js'
import { benchRecords } from './records.js'
import { benchSchemaChanges } from './schema-changes.js'
import { benchSession } from './session.js'

/** Options from the command line; each benchmark takes those it knows. */
export interface BenchOptions {
  /** Rows the records benchmark seeds (else BENCH_RECORDS, else 10,000). */
  rows?: number
}

const benches: Record<string, (options: BenchOptions) => Promise<{ ok: boolean }>> = {
  health: benchHealth,
  session: benchSession,
  records: benchRecords,
  data: benchDataTools,
  files: benchFiles,
  flows: benchFlows,
  expressions: benchExpressions,
  schema: benchSchemaChanges,
  blueprints: benchBlueprints,
  'admin-ui': benchAdminUi,
  realtime: benchRealtime,
}

function positiveInteger(flag: string, text: string | undefined): number {
  const n = Number(text?.replace(/_/g, ''))
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error(`${flag} needs a positive whole number, not ${JSON.stringify(text)}`)
  return n
}

/**
 * Names and options from argv. `npm run bench records --rows 1000000` (no `--` before the flag) reaches us
 * as `records 1000000`: npm takes `--rows` as its own config and sets npm_config_rows=true. That spelling is
 * the one the issue gives, so a bare number is taken as the rows when npm has swallowed the flag.
 */
function parseArgs(argv: readonly string[]): { names: string[]; options: BenchOptions } {
  const names: string[] = []
  const options: BenchOptions = {}
  const swallowed = process.env.npm_config_rows
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--rows') options.rows = positiveInteger('--rows', argv[++i])
    else if (arg.startsWith('--rows=')) options.rows = positiveInteger('--rows', arg.slice('--rows='.length))
    else if (arg.startsWith('-')) throw new Error(`Unknown option ${arg}; known: --rows N`)
    else if (swallowed !== undefined && /^\d[\d_]*$/.test(arg)) options.rows = positiveInteger('--rows', arg)
    else names.push(arg)
  }
  if (options.rows === undefined && swallowed !== undefined && swallowed !== 'true')
    options.rows = positiveInteger('--rows', swallowed)
  return { names, options }
}

const { names: wanted, options } = parseArgs(process.argv.slice(2))
const names = wanted.length > 0 ? wanted : Object.keys(benches)
let failed = false
for (const name of names) {
  const bench = benches[name]
  if (!bench) throw new Error(`Unknown benchmark ${name}; known: ${Object.keys(benches).join(', ')}`)
  const result = await bench(options)
  if (!result.ok) failed = true
}
if (failed) process.exitCode = 1
