import { PlinthError } from '@plinth/client'
import { useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../api.js'
import { Button, Field, ProblemNote } from '../components/form.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import { formatBytes, Loaded } from '../components/system-list.js'
import type { ScreenProps } from '../screen-props.js'
import './system.css'

type Value = boolean | number | string
type SettingsMap = Record<string, unknown>

const load = async () => (await client.transport.request<{ data: SettingsMap }>('GET', '/api/v1/settings')).data

/** The project settings (GET/PATCH /api/v1/settings): one field per key, typed by its value. */
export function Settings(_props: ScreenProps) {
  const settings = useAsync(load, [])
  return (
    <Page title="Settings">
      <p class="system-muted">
        Settings of this project. Instance settings (database, storage, email) come from the environment and are not
        shown here.
      </p>
      <Loaded value={settings.value} problem={settings.problem} loading={settings.loading}>
        {(saved) => <SettingsForm initial={saved} />}
      </Loaded>
    </Page>
  )
}

/** The key the server refused, from the envelope's details (`key`). */
function refusedKey(err: unknown): string | undefined {
  if (err instanceof PlinthError) {
    const key = (err.details as Record<string, unknown> | undefined)?.key
    if (typeof key === 'string') return key
  }
  return undefined
}

function SettingsForm(props: { initial: SettingsMap }) {
  // What the server holds: the load's answer, then each PATCH's. A save does not reload, so an edit made while
  // it was in flight is never wiped by an answer arriving after it.
  const [saved, setSaved] = useState<SettingsMap>(props.initial)
  const [draft, setDraft] = useState<Record<string, string | boolean>>({})
  const [problem, setProblem] = useState<Problem | null>(null)
  const [errorKey, setErrorKey] = useState<string | null>(null)
  const [status, setStatus] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)

  const keys = Object.keys(saved).sort()
  const shown = (key: string): string | boolean => {
    if (key in draft) return draft[key]!
    const value = saved[key]
    return typeof value === 'boolean' ? value : String(value ?? '')
  }
  /** The draft's value in the setting's type; undefined when unchanged. */
  const changed = (key: string): { value: Value } | undefined => {
    if (!(key in draft)) return undefined
    const before = saved[key]
    const raw = draft[key]!
    const value: Value =
      typeof before === 'number' && typeof raw === 'string' ? (raw.trim() === '' ? Number.NaN : Number(raw)) : raw
    return Object.is(value, before) ? undefined : { value }
  }
  const patch = Object.fromEntries(
    keys.flatMap((key) => {
      const c = changed(key)
      return c ? [[key, c.value]] : []
    }),
  )
  const dirty = Object.keys(patch).length > 0

  async function submit(event: Event) {
    event.preventDefault()
    setProblem(null)
    setErrorKey(null)
    setStatus(null)
    const bad = Object.entries(patch).find(([, v]) => typeof v === 'number' && !Number.isFinite(v))
    if (bad) {
      setErrorKey(bad[0])
      setProblem({ message: `${bad[0]}: must be a number`, field: bad[0], code: 'client', status: null })
      return
    }
    setBusy(true)
    try {
      const sent = { ...draft }
      const answer = await client.transport.request<{ data: SettingsMap }>('PATCH', '/api/v1/settings', { body: patch })
      setSaved(answer.data)
      // Only what was sent leaves the draft; a field changed again meanwhile keeps its new value.
      setDraft((d) =>
        Object.fromEntries(Object.entries(d).filter(([key, value]) => !(key in sent && sent[key] === value))),
      )
      setStatus(`Saved ${Object.keys(patch).join(', ')}.`)
    } catch (err) {
      const p = problemOf(err)
      const key = refusedKey(err)
      setErrorKey(key ?? null)
      setProblem(key ? { ...p, field: key } : p)
    } finally {
      setBusy(false)
    }
  }

  return (
    <form class="card settings-form" onSubmit={submit} aria-label="Project settings">
      {keys.map((key) => {
        const before = saved[key]
        const value = shown(key)
        const error = errorKey === key ? problem?.message : undefined
        const type = typeof before === 'boolean' ? 'boolean' : typeof before === 'number' ? 'number' : 'string'
        const set = (v: string | boolean) => setDraft((d) => ({ ...d, [key]: v }))
        return (
          <div key={key} class={changed(key) ? 'settings-changed' : undefined}>
            <Field
              label={key}
              hint={
                type === 'number' && /bytes$/i.test(key) && typeof before === 'number'
                  ? `A number of bytes (now ${formatBytes(before)})`
                  : `A ${type}`
              }
              error={error}
            >
              {(id, describedBy) =>
                type === 'boolean' ? (
                  <input
                    id={id}
                    type="checkbox"
                    aria-describedby={describedBy}
                    checked={value === true}
                    onChange={(e) => set((e.currentTarget as HTMLInputElement).checked)}
                  />
                ) : type === 'number' ? (
                  <input
                    id={id}
                    type="number"
                    step="any"
                    aria-describedby={describedBy}
                    aria-invalid={error ? true : undefined}
                    value={String(value)}
                    onInput={(e) => set((e.currentTarget as HTMLInputElement).value)}
                  />
                ) : String(value).includes('\n') || String(value).length > 80 ? (
                  <textarea
                    id={id}
                    aria-describedby={describedBy}
                    aria-invalid={error ? true : undefined}
                    value={String(value)}
                    onInput={(e) => set((e.currentTarget as HTMLTextAreaElement).value)}
                  />
                ) : (
                  <input
                    id={id}
                    type="text"
                    aria-describedby={describedBy}
                    aria-invalid={error ? true : undefined}
                    value={String(value)}
                    onInput={(e) => set((e.currentTarget as HTMLInputElement).value)}
                  />
                )
              }
            </Field>
          </div>
        )
      })}
      <ProblemNote problem={problem} />
      {status ? (
        <p class="system-status system-ok" role="status">
          {status}
        </p>
      ) : null}
      <div class="inline">
        <Button type="submit" variant="primary" disabled={!dirty || busy}>
          Save changes
        </Button>
        <Button disabled={!dirty || busy} onClick={() => setDraft({})}>
          Discard changes
        </Button>
      </div>
    </form>
  )
}
