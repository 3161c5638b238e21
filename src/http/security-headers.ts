/**
 * The policy of every response that does not set its own: nothing on it may load or run anything, be
 * framed, or be sniffed into another type. API answers are JSON, but files are served from this origin
 * too, and an uploaded HTML or SVG file opened in a browser must not run scripts as the API's origin.
 * Pages that need more (the API reference, the password-reset form) send their own policy, which wins.
 */
export const strictContentSecurityPolicy =
  "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

/**
 * Sent on every response, errors, 404s and parser refusals included (docs/http.md, decision 014). Set by
 * the transport before Hono runs, so no route needs a middleware for them. Left out on purpose:
 * `Strict-Transport-Security` (it belongs to whatever terminates TLS) and `Cross-Origin-Resource-Policy`
 * (apps on other origins embed files, `<img src>`, which `same-origin` would block).
 */
export const securityHeaders: readonly (readonly [name: string, value: string])[] = [
  ['Content-Security-Policy', strictContentSecurityPolicy],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
  ['Cross-Origin-Opener-Policy', 'same-origin'],
]
