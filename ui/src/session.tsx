import type { Session } from '@plinth/client'
import { createContext } from 'preact'
import { useContext } from 'preact/hooks'

/** What GET /api/auth/capabilities tells the sign-in and first-run screens. */
export interface Capabilities {
  usernameEnabled: boolean
  requireEmail: boolean
  magicLink: boolean
  firstRun: boolean
}

/** Who is signed in, and what the shell may offer them. */
export interface SignedIn {
  readonly session: Session
  /** A role with admin access (owner, admin): the system screens are theirs. */
  readonly admin: boolean
  /** The project the UI acts in (X-Project-Id for a super_admin's other projects). */
  readonly projectId: string
  /** Re-reads the session (after a change to the user). */
  refresh(): Promise<void>
  signOut(): Promise<void>
  /** A super_admin switches projects. */
  switchProject(projectId: string): void
}

export const SessionContext = createContext<SignedIn | null>(null)

/** The signed-in user; screens are only rendered inside a session. */
export function useSession(): SignedIn {
  const session = useContext(SessionContext)
  if (!session) throw new Error('useSession outside a session')
  return session
}
