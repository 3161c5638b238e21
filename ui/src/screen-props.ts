/** What a screen is given: the named parts of its path, and the query. */
export interface ScreenProps {
  readonly params: Readonly<Record<string, string>>
  readonly query: URLSearchParams
}
