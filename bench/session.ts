import { compare, measure, report, startPlinth } from './support.js'

/**
 * An authenticated GET /api/auth/get-session (session resolution from the 5-minute cache, the guard,
 * the role lookup) against GET /health on the same instance, in the same run. Target ratio ≥ 0.7.
 */
export async function benchSession() {
  const plinth = await startPlinth()
  try {
    const signUp = await fetch(`${plinth.url}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bench@example.com', password: 'bench password', name: 'Bench' }),
    })
    if (!signUp.ok) throw new Error(`sign-up failed: ${signUp.status} ${await signUp.text()}`)
    const { token } = (await signUp.json()) as { token: string }
    const result = await compare(
      'GET /api/auth/get-session vs GET /health',
      () => measure(plinth, '/health'),
      () => measure(plinth, '/api/auth/get-session', { headers: { authorization: `Bearer ${token}` } }),
      0.7,
    )
    report(result)
    return result
  } finally {
    await plinth.stop()
  }
}
