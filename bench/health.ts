import { compare, freePort, measure, report, startChild, startPlinth, type Child } from './support.js'

async function startScript(name: string, body: string): Promise<Child> {
  const port = await freePort()
  return startChild(
    [new URL(`./servers/${name}`, import.meta.url).pathname],
    { PORT: String(port), BODY: body },
    port,
    '/health',
  )
}

/**
 * GET /health on Plinth (logging one line per request, as in production) against a bare node:http
 * server answering the same JSON: target ratio ≥ 0.8. Also against the framework floor (Hono on
 * @hono/node-server with one handler), which separates Plinth's own cost from the framework's.
 */
export async function benchHealth() {
  const plinth = await startPlinth()
  const body = await (await fetch(`${plinth.url}/health`)).text()
  const bare = await startScript('bare-health.mjs', body)
  const floor = await startScript('hono-health.mjs', body)
  try {
    const result = await compare(
      'GET /health vs bare node:http',
      () => measure(bare, '/health'),
      () => measure(plinth, '/health'),
      0.8,
    )
    report(result)
    const framework = await compare(
      'GET /health vs Hono alone (framework floor, informational)',
      () => measure(floor, '/health'),
      () => measure(plinth, '/health'),
      0,
    )
    report(framework)
    return result
  } finally {
    await Promise.all([plinth.stop(), bare.stop(), floor.stop()])
  }
}
