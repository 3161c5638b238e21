import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDocsIndex, defaultDocsDir, findDocsDir, type DocsIndex } from './docs-index.js'

const repoRoot = resolve(fileURLToPath(new URL('../../../', import.meta.url)))

const pages: Record<string, string> = {
  'queue.md': [
    '# Queue',
    '',
    'Jobs run on **BullMQ** with Redis, or in process. A retention sweep removes finished jobs.',
    'This page mentions rate limits once: `rate` and `limit`.',
  ].join('\n'),
  'rate-limits.md': [
    '# Rate limits',
    '',
    'Every key has a budget per minute. See [the queue](queue.md) for the sweep.',
    '',
    '| Setting | Default |',
    '|---|---|',
    '| `ai.mcp_rate_limit` | 100 |',
    '',
    '```sh',
    '# a shell comment inside code',
    'curl -H "Authorization: Bearer sk-…" /api/v1/mcp',
    '```',
  ].join('\n'),
  'operators.md': [
    '# Operators',
    '',
    'Write NOT and NEAR( and title: and a "quoted" word and a star * as text. Zebra appears here.',
  ].join('\n'),
  'untitled.md': 'No heading here, only zebra text.\n',
  'decisions/001-first.md': '# 001: The first decision\n\nWe chose a zebra crossing.\n',
  'nested/deeper/page.md': '```\n# fenced heading\n```\n\n# Deep page\n\nDeep content.\n',
  'notes.txt': '# Not markdown\n\nzebra\n',
  '.hidden/secret.md': '# Hidden\n\nzebra\n',
}

let dir: string
let outside: string
let index: DocsIndex

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'plinth-docs-'))
  outside = mkdtempSync(join(tmpdir(), 'plinth-outside-'))
  for (const [path, text] of Object.entries(pages)) {
    mkdirSync(join(dir, path, '..'), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  writeFileSync(join(outside, 'leak.md'), '# Leak\n\nzebra secret\n')
  symlinkSync(join(outside, 'leak.md'), join(dir, 'link.md'))
  symlinkSync(outside, join(dir, 'linked-dir'))
  index = await createDocsIndex({ dir })
})

afterAll(() => {
  index.close()
  rmSync(dir, { recursive: true, force: true })
  rmSync(outside, { recursive: true, force: true })
})

describe('createDocsIndex on a folder of pages', () => {
  it('indexes every .md file under the folder by slug, decisions included, and nothing else', () => {
    const found = index
      .search('zebra', 50)
      .map((hit) => hit.slug)
      .sort()
    expect(found).toEqual(['decisions/001-first', 'operators', 'untitled'])
    expect(index.page('decisions/001-first')).toEqual({
      slug: 'decisions/001-first',
      title: '001: The first decision',
      markdown: pages['decisions/001-first.md'],
    })
    for (const slug of ['notes', 'notes.txt', '.hidden/secret', 'link', 'linked-dir/leak'])
      expect(index.page(slug), slug).toBeNull()
  })

  it('takes the title from the first # heading outside code, else the slug', () => {
    expect(index.page('rate-limits')?.title).toBe('Rate limits')
    expect(index.page('nested/deeper/page')?.title).toBe('Deep page')
    expect(index.page('untitled')?.title).toBe('untitled')
  })

  it('ranks a page whose title matches above one that only mentions the words', () => {
    const hits = index.search('rate limits')
    expect(hits.map((hit) => hit.slug)).toEqual(['rate-limits', 'queue'])
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score)
    expect(hits[0]!.title).toBe('Rate limits')
  })

  it('answers a plain-text snippet of the body around the match', () => {
    const [hit] = index.search('budget')
    expect(hit?.slug).toBe('rate-limits')
    expect(hit?.snippet).toContain('Every key has a budget per minute')
    expect(hit?.snippet).not.toMatch(/[*`#[\]|\n]|\]\(/)
    const [sweep] = index.search('bullmq')
    expect(sweep?.snippet).toContain('Jobs run on BullMQ with Redis')
    // A match in a code block is found; the snippet is about 30 words long at most.
    const [code] = index.search('authorization bearer')
    expect(code?.slug).toBe('rate-limits')
    expect(code!.snippet.split(' ').length).toBeLessThanOrEqual(32)
  })

  it('stems words, and a trailing * is a prefix search', () => {
    expect(
      index
        .search('sweeps')
        .map((hit) => hit.slug)
        .sort(),
    ).toEqual(['queue', 'rate-limits'])
    expect(
      index
        .search('zeb*')
        .map((hit) => hit.slug)
        .sort(),
    ).toEqual(['decisions/001-first', 'operators', 'untitled'])
  })

  it.each([
    ['NOT'],
    ['NOT zebra'],
    ['zebra NOT operators'],
    ['"quoted" word'],
    ['"quoted'],
    ['a"b'],
    ['zebra*'],
    ['* zebra'],
    ['title:'],
    ['title: zebra'],
    ['title:zebra'],
    ['NEAR('],
    ['NEAR(zebra text)'],
    ['zebra OR queue'],
    ['zebra AND'],
    ['{title} : zebra'],
    ['^zebra'],
    ['-zebra +text'],
    ["it's"],
    ['(((zebra'],
  ])('searches %j as plain words, without an error', (query) => {
    expect(() => index.search(query)).not.toThrow()
  })

  it('reads operator words as words', () => {
    expect(index.search('NOT').map((hit) => hit.slug)).toEqual(['operators'])
    expect(index.search('NEAR(').map((hit) => hit.slug)).toEqual(['operators'])
    expect(index.search('NOT zebra').map((hit) => hit.slug)).toEqual(['operators'])
    // As an FTS5 expression this would be "zebra pages that do not mention queue"; as words, it needs both.
    expect(index.search('zebra NOT queue')).toEqual([])
    expect(index.search('zebra OR queue')).toEqual([])
    expect(index.search('"quoted" word').map((hit) => hit.slug)).toEqual(['operators'])
    expect(index.search('"quoted').map((hit) => hit.slug)).toEqual(['operators'])
    expect(index.search('title: zebra').map((hit) => hit.slug)).toEqual(['operators'])
  })

  it.each([[''], ['   '], ['*'], ['"'], ['""'], ['&& || -- ()'], ['" * "']])(
    'answers [] for a query with no word: %j',
    (query) => {
      expect(index.search(query)).toEqual([])
    },
  )

  it('limits the answer: 10 by default, clamped to 1..50', async () => {
    const many = mkdtempSync(join(tmpdir(), 'plinth-docs-many-'))
    for (let i = 0; i < 60; i++) writeFileSync(join(many, `p${i}.md`), `# Page ${i}\n\ncommon word\n`)
    const big = await createDocsIndex({ dir: many })
    try {
      expect(big.search('common')).toHaveLength(10)
      expect(big.search('common', 3)).toHaveLength(3)
      expect(big.search('common', 0)).toHaveLength(1)
      expect(big.search('common', -5)).toHaveLength(1)
      expect(big.search('common', 1000)).toHaveLength(50)
      expect(big.search('common', Number.NaN)).toHaveLength(10)
      expect(big.search('common', 2.7)).toHaveLength(2)
    } finally {
      big.close()
      rmSync(many, { recursive: true, force: true })
    }
  })

  it.each([
    ['../package'],
    ['..'],
    ['decisions/../../x'],
    ['decisions/../queue'],
    ['./queue'],
    ['queue.md'],
    ['Queue'],
    ['queue/'],
    ['/etc/passwd'],
    ['queue\0'],
    ['queue\0.md'],
    ['decisions\\001-first'],
    ['linked-dir/leak'],
    [''],
  ])('page(%j) is null: only indexed slugs are pages', (slug) => {
    expect(index.page(slug)).toBeNull()
  })

  it('page() answers the raw markdown, and a copy', () => {
    const page = index.page('rate-limits')!
    expect(page.markdown).toBe(pages['rate-limits.md'])
    page.markdown = 'changed'
    expect(index.page('rate-limits')!.markdown).toBe(pages['rate-limits.md'])
    expect(index.page(join(dir, 'queue'))).toBeNull()
    expect(index.page(join(dir, 'queue.md'))).toBeNull()
    expect(index.page(undefined as unknown as string)).toBeNull()
    expect(index.search(undefined as unknown as string)).toEqual([])
  })

  it('a missing folder gives an empty index', async () => {
    const empty = await createDocsIndex({ dir: join(dir, 'no-such-folder') })
    expect(empty.search('zebra')).toEqual([])
    expect(empty.page('queue')).toBeNull()
    empty.close()
    empty.close()
  })
})

describe('the docs folder at run time', () => {
  it('is the checkout’s docs/ from src/', () => {
    expect(defaultDocsDir()).toBe(join(repoRoot, 'docs'))
  })

  it('is found from the compiled copy npm start runs (node_modules/.cache/plinth/<hash>/src/...)', () => {
    const root = mkdtempSync(join(tmpdir(), 'plinth-root-'))
    try {
      const built = join(root, 'node_modules', '.cache', 'plinth', 'abc123')
      mkdirSync(join(root, 'docs'))
      writeFileSync(join(root, 'package.json'), '{}')
      mkdirSync(join(built, 'src', 'modules', 'mcp'), { recursive: true })
      writeFileSync(join(built, 'package.json'), '{}') // bin/plinth.js copies it beside the built src/
      expect(findDocsDir(join(built, 'src', 'modules', 'mcp'))).toBe(join(root, 'docs'))
      expect(findDocsDir(join(root, 'node_modules'))).toBe(join(root, 'docs'))
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})

describe('the project’s own docs/', () => {
  let real: DocsIndex
  beforeAll(async () => {
    real = await createDocsIndex({ dir: defaultDocsDir() })
  })
  afterAll(() => real.close())

  it('finds quota pages, and serves operations and the decisions', () => {
    const hits = real.search('quota')
    expect(hits.length).toBeGreaterThan(0)
    for (const hit of hits) expect(hit.snippet.toLowerCase()).toMatch(/quota/)
    expect(real.page('operations')?.title).toBeTruthy()
    expect(real.page('operations')?.markdown).toMatch(/^# /)
    expect(real.page('decisions/036-r2-sql')?.title).toMatch(/^036: r2_sql/)
    expect(real.search('r2_sql writer claim')[0]?.slug).toBe('decisions/036-r2-sql')
    expect(real.page('../package')).toBeNull()
  })
})
