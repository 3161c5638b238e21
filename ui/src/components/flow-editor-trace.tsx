import { duration, pretty } from './flow-api.js'

export function errorText(error: unknown): string {
  if (!error) return ''
  if (typeof error === 'string') return error
  if (typeof error === 'object') {
    const e = error as { code?: unknown; message?: unknown; step?: unknown }
    const parts = [typeof e.message === 'string' ? e.message : JSON.stringify(error)]
    if (typeof e.code === 'string') parts.push(`(${e.code}${typeof e.step === 'string' ? `, step ${e.step}` : ''})`)
    return parts.join(' ')
  }
  return String(error)
}

export interface TraceStep {
  key: string
  type: string
  status: string
  input: unknown
  output: unknown
  error: unknown
  durationMs: number | null
  attempts?: number
  logs: unknown[]
  unresolved?: unknown[]
}

/** Each step of a run or dry run: its status, input, output, error and log lines. */
export function StepTrace(props: { steps: TraceStep[]; inputLabel?: string }) {
  if (props.steps.length === 0) return <p class="empty">No step ran.</p>
  return (
    <ol class="flow-trace-steps">
      {props.steps.map((s) => (
        <li key={s.key} class="flow-trace-step">
          <p class="flow-trace-title">
            {s.key} <span class="badge">{s.type}</span> <span class={`badge run-${s.status}`}>{s.status}</span>{' '}
            <span class="hint-inline">
              {duration(s.durationMs)}
              {s.attempts && s.attempts > 1 ? ` · ${s.attempts} attempts` : ''}
            </span>
          </p>
          <div class="flow-io">
            <div>
              <p class="flow-io-label">{props.inputLabel ?? 'Input'}</p>
              <pre tabIndex={0} aria-label={`Input of ${s.key}`}>
                {pretty(s.input)}
              </pre>
            </div>
            <div>
              <p class="flow-io-label">Output</p>
              <pre tabIndex={0} aria-label={`Output of ${s.key}`}>
                {pretty(s.output)}
              </pre>
            </div>
          </div>
          {s.error ? <p class="flow-errors">Error: {errorText(s.error)}</p> : null}
          {s.logs.length || s.unresolved?.length ? (
            <ul class="flow-logs">
              {s.logs.map((l, i) => {
                const line = l as { level?: string; message?: string }
                return (
                  // biome-ignore lint/suspicious/noArrayIndexKey: log lines have no identity
                  <li key={i}>
                    <span class="badge">{line.level ?? 'log'}</span> {line.message ?? JSON.stringify(l)}
                  </li>
                )
              })}
              {(s.unresolved ?? []).map((u, i) => {
                const miss = u as { path?: string; tag?: string; message?: string }
                return (
                  // biome-ignore lint/suspicious/noArrayIndexKey: entries have no identity
                  <li key={`u${i}`}>
                    <span class="badge">unresolved</span> {miss.path ? `${miss.path}: ` : ''}
                    {miss.message ?? JSON.stringify(u)}
                  </li>
                )
              })}
            </ul>
          ) : null}
        </li>
      ))}
    </ol>
  )
}
