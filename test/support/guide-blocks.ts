/**
 * Reading a guide of docs/guides/ for the doc test (docs/testing.md, "Guides"): its fenced blocks, which of
 * them run, and the server blocks the test replaces with servers of its own. Pure: no process, no file.
 */

/** One fenced block: its language, the words after it (`bash server` → tags ['server']), its text. */
export interface GuideBlock {
  lang: string
  tags: string[]
  code: string
  /** The guide's line number of the block's first line of code. */
  line: number
}

/** A server a `bash server` block starts: the settings its line gives (`PORT=8091 plinth serve`). */
export interface ServerStart {
  env: Record<string, string>
  line: number
}

/** Languages that are shell but not `bash`: refused, so no command can sit in a block the test skips. */
const otherShells = new Set(['', 'sh', 'shell', 'console', 'zsh', 'fish', 'shell-session', 'powershell'])
/** The tags a bash block may carry. */
const knownTags = new Set(['server', 'norun'])
/** Settings a server block may `export`: the outside services, which the test replaces with its own. */
export const serviceSettings = [
  'DATABASE_URL',
  'REDIS_URL',
  'S3_ENDPOINT',
  'S3_BUCKET',
  'S3_ACCESS_KEY_ID',
  'S3_SECRET_ACCESS_KEY',
  'S3_REGION',
  'SECRET_KEY',
]

/** Every fenced block of a Markdown text, in order (``` and ~~~ fences; indented fences too). */
export function readBlocks(markdown: string): GuideBlock[] {
  const lines = markdown.split('\n')
  const blocks: GuideBlock[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = lines[i]!.match(/^\s*(`{3,}|~{3,})\s*([^`\s]*)\s*(.*)$/)
    if (!open) continue
    const fence = open[1]!
    const body: string[] = []
    let j = i + 1
    while (j < lines.length && !lines[j]!.trim().startsWith(fence)) body.push(lines[j++]!)
    blocks.push({
      lang: open[2]!.toLowerCase(),
      tags: open[3]!.split(/\s+/).filter(Boolean),
      code: body.join('\n'),
      line: i + 2,
    })
    i = j
  }
  return blocks
}

/**
 * The convention's checks, as messages naming the guide's line (empty when the guide keeps it): shell only
 * in `bash` blocks, known tags, server blocks before any block that runs, and every `curl` that runs
 * either fails on an error status (`-f`, `--fail`, `--fail-with-body`) or prints the status (`-w`).
 */
export function checkBlocks(blocks: GuideBlock[]): string[] {
  const problems: string[] = []
  let ran = false
  for (const block of blocks) {
    if (otherShells.has(block.lang)) {
      problems.push(
        `line ${block.line}: a \`${block.lang || '(no language)'}\` block: write shell as \`bash\` (runs), \`bash norun\` (shown only) or \`bash server\`; output as \`text\``,
      )
      continue
    }
    if (block.lang !== 'bash') continue
    for (const tag of block.tags) if (!knownTags.has(tag)) problems.push(`line ${block.line}: unknown tag "${tag}"`)
    if (block.tags.includes('server')) {
      if (ran) problems.push(`line ${block.line}: a server block after commands that run; start servers first`)
      continue
    }
    if (block.tags.includes('norun')) continue
    ran = true
    for (const { command, line } of commands(block)) {
      if (!/(^|[\s;|&(])curl\s/.test(command)) continue
      if (!/\s(-[a-zA-Z]*[fw][a-zA-Z]*|--fail(-with-body)?|--write-out)(\s|$)/.test(command))
        problems.push(`line ${line}: curl without -f or -w: an error status would pass unnoticed`)
    }
  }
  return problems
}

/** The block's commands with `\` continuations joined and comments dropped, each with its guide line. */
function commands(block: GuideBlock): { command: string; line: number }[] {
  const out: { command: string; line: number }[] = []
  let current = ''
  let start = 0
  block.code.split('\n').forEach((raw, i) => {
    const text = raw.replace(/(^|\s)#.*$/, '')
    if (!current) start = block.line + i
    current += ` ${text.replace(/\\$/, '')}`
    if (!text.endsWith('\\')) {
      if (current.trim()) out.push({ command: current.trim(), line: start })
      current = ''
    }
  })
  return out
}

/**
 * The servers a `bash server` block starts. Each command line is `[NAME=value …] (plinth serve | npm start)`,
 * optionally with a trailing `&`; `export NAME=…` lines may name only the outside services
 * (`serviceSettings`), which the test supplies itself. Anything else throws: the test would not be
 * running what the guide shows.
 */
export function readServerBlock(block: GuideBlock): ServerStart[] {
  const starts: ServerStart[] = []
  for (const { command, line } of commands(block)) {
    const exported = command.match(/^export\s+(.+)$/)
    if (exported) {
      for (const [, name] of exported[1]!.matchAll(/(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)=/g))
        if (!serviceSettings.includes(name!))
          throw new Error(`line ${line}: a server block may export only ${serviceSettings.join(', ')} (not ${name})`)
      continue
    }
    const start = command.match(/^((?:[A-Z][A-Z0-9_]*=\S*\s+)*)(?:plinth serve|npm start)(?:\s*&)?$/)
    if (!start)
      throw new Error(`line ${line}: a server block holds \`[NAME=value …] plinth serve\` lines, not: ${command}`)
    const env: Record<string, string> = {}
    for (const pair of start[1]!.trim().split(/\s+/).filter(Boolean)) {
      const [name, ...value] = pair.split('=')
      const text = value.join('=')
      if (/[$`'"]/.test(text)) throw new Error(`line ${line}: ${name}: the test takes literal values only`)
      env[name!] = text
    }
    starts.push({ env, line })
  }
  return starts
}

/** The example ports a guide uses (8090 to 8099), each to be replaced by a free port. */
export function examplePorts(markdown: string): number[] {
  return [...new Set([...markdown.matchAll(/\b809\d\b/g)].map((match) => Number(match[0])))]
}

/** The text with each example port replaced by its free port. */
export function rewritePorts(text: string, ports: Map<number, number>): string {
  return text.replace(/\b809\d\b/g, (port) => String(ports.get(Number(port)) ?? port))
}
