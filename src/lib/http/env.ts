/**
 * Per-request values shared by the HTTP layer and module routes.
 * Later capabilities add theirs here (principal, project) so every route sees one typed context.
 */
export interface AppVariables {
  requestId: string
  /** Set when no route matched, so an alias 404 does not advertise a successor. */
  unmatched?: boolean
}

export interface AppEnv {
  Variables: AppVariables
}
