/**
 * The one list of header credentials: a header holds a credential when the last word of its name (any
 * case, words split at `-` or `_`) is one of these. So `Authorization`, `Proxy-Authorization`, `Cookie`,
 * `Set-Cookie`, `ApiKey`, `Api-Key`, `X-Api-Key`, `X-Auth-Token`, `X-Client-Secret`, `X-Db-Password`, and
 * the bare words. It errs towards masking (`Idempotency-Key` is masked too); docs/automation.md lists it.
 * Flows mask these values (flows/masking.ts); outbound requests drop them on a redirect to another origin.
 */
export const credentialHeaderWords: readonly string[] = [
  'authorization',
  'cookie',
  'apikey',
  'token',
  'key',
  'secret',
  'password',
]

/** True when a header of this name holds a credential (credentialHeaderWords). */
export function isCredentialHeader(name: string): boolean {
  const words = name.toLowerCase().split(/[-_]/)
  return credentialHeaderWords.includes(words[words.length - 1] ?? '')
}
