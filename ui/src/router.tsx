import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'

/** The UI lives under /_/; paths inside it are written without that prefix. */
export const base = '/_'

/** The path inside the UI (`/collections/posts`), and its query. */
export interface Location {
  readonly path: string
  readonly query: URLSearchParams
}

function current(): Location {
  const path = location.pathname.startsWith(`${base}/`) ? location.pathname.slice(base.length) : '/'
  return { path: path || '/', query: new URLSearchParams(location.search) }
}

const listeners = new Set<() => void>()
addEventListener('popstate', () => {
  for (const listener of listeners) listener()
})

/** Goes to a path inside the UI (`/collections`), adding a history entry unless `replace`. */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = `${base}${to.startsWith('/') ? to : `/${to}`}`
  if (options.replace) history.replaceState(null, '', url)
  else history.pushState(null, '', url)
  for (const listener of listeners) listener()
}

/** The current location; re-renders on navigation. */
export function useLocation(): Location {
  const [location, setLocation] = useState(current)
  useEffect(() => {
    const update = () => setLocation(current())
    listeners.add(update)
    return () => {
      listeners.delete(update)
    }
  }, [])
  return location
}

/** Matches `/collections/:name` against a path; the named parts, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/').filter(Boolean)
  const got = path.split('/').filter(Boolean)
  if (want.length !== got.length) return null
  const params: Record<string, string> = {}
  for (const [i, part] of want.entries()) {
    const value = got[i]!
    if (part.startsWith(':')) params[part.slice(1)] = decodeURIComponent(value)
    else if (part !== value) return null
  }
  return params
}

/** A link inside the UI: a real <a href> (open in a new tab works), navigating without a reload. */
export function Link(props: {
  to: string
  children: ComponentChildren
  class?: string
  'aria-current'?: 'page' | undefined
}) {
  const { to, children, ...rest } = props
  return (
    <a
      {...rest}
      href={`${base}${to}`}
      onClick={(event) => {
        if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return
        event.preventDefault()
        navigate(to)
      }}
    >
      {children}
    </a>
  )
}
