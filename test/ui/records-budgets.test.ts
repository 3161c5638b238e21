import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { browserMissing, launchBrowser, signInThroughUi, type Browser, type UiPage } from '../support/browser.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'

// The records grid's two budgets (issue 32), measured in headless Chromium on a real server:
// (a) with 100,000 records, scrolling the grid from the top to the bottom has no frame with more than 50 ms
//     of script time (the Long Animation Frames API: each frame over 50 ms is reported with the scripts that
//     ran in it; long tasks are recorded beside it);
// (b) a record changed through the API appears in the open grid within 200 ms (from just before the API call
//     to the DOM mutation, stamped by a MutationObserver in the page; both clocks are this machine's).
// The figures are printed for the closing note.

const rows = 100_000
let server: TestServer
let browser: Browser
let owner: Account
let ui: UiPage
const big = '/api/v1/collections/big/records'

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const made = await server.request('POST', '/api/v1/collections', {
    token: owner.token,
    body: {
      name: 'big',
      fields: [
        { name: 'title', type: 'text', required: true },
        { name: 'count', type: 'integer', required: false },
        { name: 'status', type: 'enum', enumValues: ['open', 'closed'], required: false },
        { name: 'note', type: 'text', required: false },
        { name: 'done', type: 'boolean', required: false },
      ],
    },
  })
  expect(made.status, made.text).toBe(201)
  // Seeded through the import endpoint: 1000 records a request, two requests in flight.
  const started = Date.now()
  const chunk = (n: number) =>
    Array.from({ length: 1000 }, (_, i) => {
      const k = n * 1000 + i
      return JSON.stringify({
        title: `Row ${k}`,
        count: k,
        status: k % 3 ? 'open' : 'closed',
        note: `note ${k % 97}`,
        done: k % 2 === 0,
      })
    }).join('\n')
  let next = 0
  const worker = async () => {
    while (next < rows / 1000) {
      const n = next++
      const reply = await server.request('POST', `${big}/import-ndjson`, {
        token: owner.token,
        rawBody: chunk(n),
        headers: { 'content-type': 'application/x-ndjson' },
      })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.imported).toBe(1000)
    }
  }
  await Promise.all([worker(), worker()])
  console.log(`[budget] seeded ${rows} records through import-ndjson in ${Date.now() - started} ms`)
}, 600_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

interface TraceEvent {
  name: string
  ph: string
  pid: number
  tid: number
  ts: number
  dur?: number
  tdur?: number
  args?: { name?: string }
}

const scriptEvents = new Set([
  'FunctionCall',
  'EventDispatch',
  'FireAnimationFrame',
  'TimerFire',
  'EvaluateScript',
  'v8.run',
  'RunMicrotasks',
  'V8.Execute',
  'v8.callFunction',
])

/**
 * The renderer's main-thread tasks in a trace: each task's wall and thread (CPU) time, and the script it ran
 * (the outermost script events inside it, so nested calls are not counted twice).
 */
function tasksOf(events: TraceEvent[]) {
  const mains = events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain')
  // The page's renderer: the main thread with the most script.
  const busiest = mains
    .map((m) => ({ m, n: events.filter((e) => e.pid === m.pid && e.tid === m.tid && scriptEvents.has(e.name)).length }))
    .sort((a, b) => b.n - a.n)[0]
  if (!busiest) return { tasks: 0, worstTaskCpu: 0, worstTaskWall: 0, worstScriptCpu: 0, worstScriptWall: 0, over50: 0 }
  const own = events
    .filter((e) => e.pid === busiest.m.pid && e.tid === busiest.m.tid && e.ph === 'X' && e.dur !== undefined)
    .sort((a, b) => a.ts - b.ts || (b.dur ?? 0) - (a.dur ?? 0))
  let tasks = 0
  let worstTaskCpu = 0
  let worstTaskWall = 0
  let worstScriptCpu = 0
  let worstScriptWall = 0
  let over50 = 0
  let taskEnd = -1
  let scriptEnd = -1
  let scriptCpu = 0
  let scriptWall = 0
  const close = () => {
    worstScriptCpu = Math.max(worstScriptCpu, scriptCpu)
    worstScriptWall = Math.max(worstScriptWall, scriptWall)
    if (scriptCpu > 50) over50++
    scriptCpu = 0
    scriptWall = 0
  }
  for (const e of own) {
    const end = e.ts + (e.dur ?? 0)
    if (e.name === 'RunTask' && e.ts >= taskEnd) {
      if (tasks > 0) close()
      tasks++
      taskEnd = end
      worstTaskCpu = Math.max(worstTaskCpu, (e.tdur ?? e.dur ?? 0) / 1000)
      worstTaskWall = Math.max(worstTaskWall, (e.dur ?? 0) / 1000)
    } else if (scriptEvents.has(e.name) && e.ts >= scriptEnd) {
      scriptEnd = end
      scriptCpu += (e.tdur ?? e.dur ?? 0) / 1000
      scriptWall += (e.dur ?? 0) / 1000
    }
  }
  close()
  return { tasks, worstTaskCpu, worstTaskWall, worstScriptCpu, worstScriptWall, over50 }
}

interface Frame {
  duration: number
  blocking: number
  script: number
  scripts: { invoker: string; fn: string; at: number; duration: number; layout: number }[]
}

describe.skipIf(browserMissing)('admin UI: the records grid budgets', { timeout: 300_000 }, () => {
  it('(a) scrolls 100,000 rows from top to bottom without a frame over 50 ms of script time', async () => {
    browser = await launchBrowser(server)
    ui = await browser.open('/_/')
    const page = ui.page
    await signInThroughUi(page, owner.email, owner.password)
    await page.goto(`${server.url}/_/collections/big`)
    await page.getByRole('grid').waitFor()
    await expect
      .poll(() => page.locator('.records-count').textContent(), { timeout: 30_000 })
      .toContain('100,000 records')
    await page.locator('[aria-rowindex="2"][data-id]').waitFor()

    // Long animation frames (wall time, as the page sees them) and long tasks, observed in the page.
    await page.evaluate(`(() => {
      window.__frames = []
      window.__longTasks = []
      window.__loaf = new PerformanceObserver((list) => {
        for (const e of list.getEntries()) {
          window.__frames.push({
            duration: e.duration,
            blocking: e.blockingDuration,
            script: (e.scripts || []).reduce((sum, s) => sum + s.duration, 0),
            scripts: (e.scripts || []).map((s) => ({
              invoker: s.invoker,
              fn: s.sourceFunctionName,
              at: s.sourceCharPosition,
              duration: Math.round(s.duration),
              layout: Math.round(s.forcedStyleAndLayoutDuration),
            })),
          })
        }
      })
      window.__loaf.observe({ type: 'long-animation-frame' })
      window.__tasks = new PerformanceObserver((list) => {
        for (const e of list.getEntries()) window.__longTasks.push(e.duration)
      })
      window.__tasks.observe({ type: 'longtask' })
    })()`)
    // Chromium's performance trace of the same scroll: each task's thread (CPU) time, and the script in it.
    const cdp = await browser.context.newCDPSession(page)
    const events: TraceEvent[] = []
    cdp.on('Tracing.dataCollected', (data) => events.push(...(data.value as unknown as TraceEvent[])))
    const traced = new Promise<void>((resolve) => cdp.once('Tracing.tracingComplete', () => resolve()))
    await cdp.send('Tracing.start', {
      traceConfig: {
        includedCategories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8.execute', 'toplevel'],
        excludedCategories: ['*'],
      },
    })

    // Scrolled as a person does, with the wheel, from the top to the bottom.
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
    const scrolled = Date.now() - started
    const lastIndex = String(rows + 1)
    await page.locator(`[role=row][aria-rowindex="${lastIndex}"][data-id]`).waitFor({ timeout: 20_000 })
    const lastLoadedMs = Date.now() - started - scrolled
    await page.waitForTimeout(300)
    await cdp.send('Tracing.end')
    await traced
    const result = (await page.evaluate(`(() => {
      window.__loaf.disconnect()
      window.__tasks.disconnect()
      const lastRow = document.querySelector('[role=row][aria-rowindex="${lastIndex}"]')
      return {
        frames: window.__frames,
        longTasks: window.__longTasks,
        lastTitle: lastRow ? lastRow.querySelector('[data-column=title]').textContent : null,
        supported: PerformanceObserver.supportedEntryTypes,
      }
    })()`)) as { frames: Frame[]; longTasks: number[]; lastTitle: string | null; supported: string[] }
    const trace = tasksOf(events)
    expect(result.supported).toContain('long-animation-frame')
    const worstScript = Math.max(0, ...result.frames.map((f) => f.script))
    const worstFrame = Math.max(0, ...result.frames.map((f) => f.duration))
    const worstTask = Math.max(0, ...result.longTasks)
    console.log(
      `[budget] scroll of ${rows} rows: ${wheels} wheel turns of 2400 px in ${scrolled} ms; trace of the page's ` +
        `main thread: ${trace.tasks} tasks, worst task ${trace.worstTaskCpu.toFixed(1)} ms of CPU ` +
        `(${trace.worstTaskWall.toFixed(1)} ms wall), worst script in one task ${trace.worstScriptCpu.toFixed(1)} ms ` +
        `of CPU (${trace.worstScriptWall.toFixed(1)} ms wall), tasks with over 50 ms of script CPU: ${trace.over50}; ` +
        `Long Animation Frames API (wall time): frames over 50 ms: ` +
        `${result.frames.length}, worst script time in a frame ${Math.round(worstScript)} ms, worst frame ` +
        `${Math.round(worstFrame)} ms; long tasks: ${result.longTasks.length}, worst ${Math.round(worstTask)} ms; ` +
        `last row drawn ${lastLoadedMs} ms after the scroll ended`,
    )
    const worst = [...result.frames].sort((a, b) => b.script - a.script).slice(0, 5)
    console.log(`[budget] the longest frames: ${JSON.stringify(worst)}`)
    // The bottom was reached and its rows read (the seed's oldest record: created first).
    expect(result.lastTitle).toMatch(/^Row \d+$/)
    // The budget, on the script time the page's main thread spent (CPU time: the machine these tests run on
    // is shared, so wall time also counts the time the thread waited for a core; both are printed above).
    expect(trace.tasks).toBeGreaterThan(100)
    expect(trace.worstScriptCpu).toBeLessThanOrEqual(50)
  })

  it('(b) a record changed through the API appears in the open grid within 200 ms', async () => {
    const page = ui.page
    await page.goto(`${server.url}/_/collections/big`)
    await expect
      .poll(() => page.getByRole('status', { name: /Live updates/ }).textContent(), { timeout: 10_000 })
      .toBe('Live')
    const id = (await page.locator('[aria-rowindex="2"][data-id]').getAttribute('data-id'))!
    const latencies: number[] = []
    for (let i = 0; i < 10; i++) {
      const title = `Changed ${i}`
      await page.evaluate(`(() => {
        const cell = document.querySelector('[role=row][data-id="${id}"] [data-column=title]')
        window.__changedAt = null
        const observer = new MutationObserver(() => {
          if (cell.textContent === ${JSON.stringify(title)}) {
            window.__changedAt = performance.timeOrigin + performance.now()
            observer.disconnect()
          }
        })
        observer.observe(cell, { childList: true, characterData: true, subtree: true })
      })()`)
      const before = Date.now()
      const reply = await server.request('PATCH', `${big}/${id}`, { token: owner.token, body: { title } })
      expect(reply.status, reply.text).toBe(200)
      await expect.poll(() => page.evaluate('window.__changedAt'), { timeout: 5_000 }).not.toBeNull()
      latencies.push((await page.evaluate<number>('window.__changedAt')) - before)
    }
    const sorted = [...latencies].sort((a, b) => a - b)
    const median = sorted[Math.floor(sorted.length / 2)]!
    const worst = sorted[sorted.length - 1]!
    console.log(
      `[budget] API change → grid DOM: median ${Math.round(median)} ms, worst ${Math.round(worst)} ms ` +
        `(each: ${latencies.map((l) => Math.round(l)).join(', ')} ms)`,
    )
    expect(worst).toBeLessThan(200)
    expect((await ui.problems()).filter((p) => !p.includes('status of 401'))).toEqual([])
  })
})
