import { useCallback, useEffect, useState } from 'preact/hooks'
import { problemOf, type Problem } from '../api.js'

/** Loads something for a screen: its value, a problem if it failed, and `reload`. */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ value: T | undefined; problem: Problem | null; loading: boolean }>({
    value: undefined,
    problem: null,
    loading: true,
  })
  const reload = useCallback(async () => {
    setState((s) => ({ ...s, loading: true }))
    try {
      const value = await load()
      setState({ value, problem: null, loading: false })
    } catch (err) {
      setState((s) => ({ ...s, problem: problemOf(err), loading: false }))
    }
  }, deps)
  useEffect(() => {
    void reload()
  }, [reload])
  return { ...state, reload }
}
