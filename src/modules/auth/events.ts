import type { PrincipalSnapshot } from '../../lib/events/index.js'

/** Published after a sign-in opened a session (every method: password, magic link, OAuth, two-factor); docs/events.md. */
export interface AuthEvents extends Record<string, unknown> {
  'user.login': UserLoginEvent
}

export interface UserLoginEvent {
  projectId: string
  /** The person who signed in (the same as principal.id). */
  userId: string
  /** How: `email` (password), `magic_link`, `oauth:<provider>`, … as the audit log's sign-in entry names it. */
  method: string
  /** The session's principal: the person, kind `user`, with their role. */
  principal: PrincipalSnapshot
  at: number
}
