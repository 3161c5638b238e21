// npm run bench admin-ui: the admin UI's records grid budgets (issue 32) in headless Chromium on a real server,
// each beside its baseline in the same run:
// (a) scrolling the grid from top to bottom with the wheel, under Chromium's performance trace: the most script
//     CPU any main-thread task spent (budget: 50 ms) with 100,000 records, beside the same scroll over 1,000
//     (the ratio shows the cost does not grow with the rows);
// (b) a record changed through the API, to the open grid's DOM (a MutationObserver's stamp; budget: 200 ms),
//     beside the same change reaching a Node subscriber of the same stream (the transport alone).
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Page } from 'playwright-core'
import WebSocket from 'ws'
import { createClient } from '../packages/client/src/index.js'
import { createApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { listen } from '../src/http/server.js'
import { tasksOf, type Frame, type TraceEvent } from './admin-ui-trace.js'

const bigRows = 100_000
const smallRows = 1_000
const owner = { email: 'bench@example.com', password: 'bench password', name: 'Bench' }

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

async function seed(url: string, token: string, name: string, rows: number): Promise<void> {
  const call = (method: string, path: string, body: string, type = 'application/json') =>
    fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': type }, body })
  const made = await call(
    'POST',
    '/api/v1/collections',
    JSON.stringify({
      name,
      fields: [
        { name: 'title', type: 'text', required: true },
        { name: 'count', type: 'integer', required: false },
        { name: 'status', type: 'enum', enumValues: ['open', 'closed'], required: false },
        { name: 'note', type: 'text', required: false },
        { name: 'done', type: 'boolean', required: false },
      ],
    }),
  )
  if (made.status !== 201) throw new Error(`creating ${name}: ${made.status} ${await made.text()}`)
  const chunk = (n: number) =>
    Array.from({ length: 1000 }, (_, i) => {
      const k = n * 1000 + i
      return JSON.stringify({
        title: `Row ${k}`,
        count: k,
        status: k % 3 ? 'open' : 'closed',
        note: `n${k % 97}`,
        done: k % 2 === 0,
      })
    }).join('\n')
  let next = 0
  const worker = async () => {
    while (next < rows / 1000) {
      const reply = await call(
        'POST',
        `/api/v1/collections/${name}/records/import-ndjson`,
        chunk(next++),
        'application/x-ndjson',
      )
      if (reply.status !== 200) throw new Error(`import into ${name}: ${reply.status} ${await reply.text()}`)
    }
  }
  await Promise.all([worker(), worker()])
}

/** Scrolls one collection's grid from top to bottom with the wheel under a trace; the main thread's worst task. */
async function scroll(page: Page, url: string, name: string, rows: number) {
  await page.goto(`${url}/_/collections/${name}`)
  await page.getByRole('grid').waitFor()
  await page.locator('.records-count', { hasText: `${rows.toLocaleString('en')} records` }).waitFor({ timeout: 30_000 })
  await page.locator('[aria-rowindex="2"][data-id]').waitFor()
  await page.evaluate(`(() => {
    window.__frames = []
    window.__loaf = new PerformanceObserver((list) => {
      for (const e of list.getEntries())
        window.__frames.push({ duration: e.duration, script: (e.scripts || []).reduce((s, x) => s + x.duration, 0) })
    })
    window.__loaf.observe({ type: 'long-animation-frame' })
  })()`)
  const cdp = await page.context().newCDPSession(page)
  const events: TraceEvent[] = []
  cdp.on('Tracing.dataCollected', (data) => events.push(...(data.value as unknown as TraceEvent[])))
  const traced = new Promise<void>((resolve) => cdp.once('Tracing.tracingComplete', () => resolve()))
  await cdp.send('Tracing.start', {
    traceConfig: {
      includedCategories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8.execute', 'toplevel'],
      excludedCategories: ['*'],
    },
  })
  const box = (await page.getByRole('grid').boundingBox())!
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2)
  const started = Date.now()
  let wheels = 0
  for (;;) {
    await page.mouse.wheel(0, 2400)
    wheels++
    if (wheels % 25 === 0) {
      const atEnd = await page.evaluate(
        `(() => { const g = document.querySelector('[role=grid]'); return g.scrollTop + g.clientHeight >= g.scrollHeight - 2 })()`,
      )
      if (atEnd) break
    }
  }
  const scrolledMs = Date.now() - started
  await page.locator(`[role=row][aria-rowindex="${rows + 1}"][data-id]`).waitFor({ timeout: 20_000 })
  await page.waitForTimeout(300)
  await cdp.send('Tracing.end')
  await traced
  await cdp.detach()
  const frames = (await page.evaluate('(() => { window.__loaf.disconnect(); return window.__frames })()')) as Frame[]
  return { rows, wheels, scrolledMs, trace: tasksOf(events), longFrames: frames.length }
}

/** Ten changes through the API: when each reached the grid's DOM, and when it reached a Node subscriber. */
async function liveChanges(page: Page, url: string, token: string, name: string) {
  await page.goto(`${url}/_/collections/${name}`)
  await page
    .getByRole('status', { name: /Live updates/ })
    .filter({ hasText: 'Live' })
    .waitFor({ timeout: 10_000 })
  const id = (await page.locator('[aria-rowindex="2"][data-id]').getAttribute('data-id'))!
  const client = createClient({ url, apiKey: undefined, WebSocket: WebSocket as never })
  client.transport.tokens.set({ token })
  // What the Node subscriber waits for and when it heard it (written by its handler).
  const heard = { title: '', at: 0 }
  const sub = client.subscribe<{ title: string }>(name, { id: { _eq: id } }, (event) => {
    if (event.type !== 'gap' && event.record.title === heard.title) heard.at = Date.now()
  })
  await sub.ready
  const dom: number[] = []
  const stream: number[] = []
  for (let i = 0; i < 10; i++) {
    const title = `Changed ${i}`
    heard.title = title
    heard.at = 0
    await page.evaluate(`(() => {
      const cell = document.querySelector('[role=row][data-id="${id}"] [data-column=title]')
      window.__changedAt = null
      const observer = new MutationObserver(() => {
        if (cell.textContent === ${JSON.stringify(title)}) { window.__changedAt = performance.timeOrigin + performance.now(); observer.disconnect() }
      })
      observer.observe(cell, { childList: true, characterData: true, subtree: true })
    })()`)
    const before = Date.now()
    const reply = await fetch(`${url}/api/v1/collections/${name}/records/${id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title }),
    })
    if (reply.status !== 200) throw new Error(`PATCH: ${reply.status}`)
    const deadline = Date.now() + 5000
    let changedAt: number | null = null
    while ((changedAt === null || heard.at === 0) && Date.now() < deadline) {
      changedAt = (await page.evaluate('window.__changedAt')) as number | null
      if (changedAt === null || heard.at === 0) await new Promise((r) => setTimeout(r, 5))
    }
    if (changedAt === null || heard.at === 0) throw new Error(`change ${i} did not arrive within 5 s`)
    dom.push(changedAt - before)
    stream.push(heard.at - before)
  }
  await sub.close()
  return { dom, stream }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const worst = (xs: number[]) => Math.max(...xs)

export async function benchAdminUi(): Promise<{ ok: boolean }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-bench-ui-'))
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const app = await createApp(
    loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', PUBLIC_URL: url, PASSWORD_HASH_ITERATIONS: '1000' }),
  )
  const server = await listen(app.fetch, { host: '127.0.0.1', port, log: app.log })
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'],
  })
  try {
    const signedUp = await fetch(`${url}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(owner),
    })
    const { token } = (await signedUp.json()) as { token: string }
    const seeded = Date.now()
    await seed(url, token, 'small', smallRows)
    await seed(url, token, 'big', bigRows)
    console.log(`admin UI: seeded ${smallRows + bigRows} records through import-ndjson in ${Date.now() - seeded} ms`)
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage()
    await page.goto(`${url}/_/`)
    await page.getByLabel(/^Email/).fill(owner.email)
    await page.getByLabel('Password').fill(owner.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('navigation', { name: 'Main' }).waitFor()

    const small = await scroll(page, url, 'small', smallRows)
    const big = await scroll(page, url, 'big', bigRows)
    for (const s of [small, big])
      console.log(
        `  scroll ${s.rows.toLocaleString('en')} rows: ${s.wheels} wheel turns in ${s.scrolledMs} ms, ${s.trace.tasks} tasks; ` +
          `worst script in a task ${s.trace.worstScriptCpu.toFixed(1)} ms CPU (${s.trace.worstScriptWall.toFixed(1)} ms wall), ` +
          `worst task ${s.trace.worstTaskCpu.toFixed(1)} ms CPU; tasks over 50 ms of script CPU: ${s.trace.over50}; ` +
          `long animation frames (wall, > 50 ms): ${s.longFrames}`,
      )
    const ratioA = big.trace.worstScriptCpu / Math.max(small.trace.worstScriptCpu, 0.1)
    const okA = big.trace.worstScriptCpu <= 50
    console.log(
      `admin UI (a) grid scroll, 100,000 rows: worst script CPU in a task ${big.trace.worstScriptCpu.toFixed(1)} ms ` +
        `(budget 50 ms) ${okA ? 'ok' : 'OVER'}; ratio to 1,000 rows ${ratioA.toFixed(2)}×`,
    )

    const live = await liveChanges(page, url, token, 'big')
    const okB = worst(live.dom) < 200
    console.log(
      `admin UI (b) API change → grid DOM: median ${Math.round(median(live.dom))} ms, worst ${Math.round(worst(live.dom))} ms ` +
        `(budget 200 ms) ${okB ? 'ok' : 'OVER'}; baseline, the same change to a Node subscriber of the stream: ` +
        `median ${Math.round(median(live.stream))} ms, worst ${Math.round(worst(live.stream))} ms; ratio of medians ` +
        `${(median(live.dom) / Math.max(median(live.stream), 1)).toFixed(2)}×`,
    )
    return { ok: okA && okB }
  } finally {
    await browser.close()
    await server.stop(1000)
    await app.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}
