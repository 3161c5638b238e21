import { terminalRunStatuses, type FlowRun, type FlowRunDetail, type RunStatus } from '@plinth/client'
import { useEffect, useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../api.js'
import { duration, flowsApi, pretty, when, type FlowDetail, type Quotas } from '../components/flow-api.js'
import { Button, ProblemNote } from '../components/form.js'
import { Page } from '../components/page.js'
import { Link, navigate } from '../router.js'
import type { ScreenProps } from '../screen-props.js'
import { errorText, StepTrace } from '../components/flow-editor-trace.js'
import './flows.css'

const pageSize = 25
const statuses: RunStatus[] = ['pending', 'running', 'completed', 'failed', 'cancelled', 'timed_out']
const retryable: RunStatus[] = ['failed', 'cancelled', 'timed_out']
const active = (s: RunStatus) => !terminalRunStatuses.includes(s)

/** /flows/:id/runs: the flow's runs, one run's step log, cancel and retry, and the project's quotas. */
export function FlowRuns(props: ScreenProps) {
  const id = props.params.id!
  const selected = props.query.get('run')
  const [flow, setFlow] = useState<FlowDetail | null>(null)
  const [runs, setRuns] = useState<{ data: FlowRun[]; total: number; hasMore: boolean } | null>(null)
  const [page, setPage] = useState(1)
  const [status, setStatus] = useState<RunStatus | ''>('')
  const [problem, setProblem] = useState<Problem | null>(null)
  const [tick, setTick] = useState(0)

  useEffect(() => {
    flowsApi.get(id).then(setFlow, (err) => setProblem(problemOf(err)))
  }, [id])
  useEffect(() => {
    let live = true
    client.flows.runs({ flowId: id, page, limit: pageSize, ...(status ? { status } : {}) }).then(
      (r) => live && setRuns(r),
      (err) => live && setProblem(problemOf(err)),
    )
    return () => {
      live = false
    }
  }, [id, page, status, tick])
  // While a run is pending or running, read the list again every second.
  const anyActive = runs?.data.some((r) => active(r.status)) ?? false
  useEffect(() => {
    if (!anyActive) return
    const timer = setTimeout(() => setTick((t) => t + 1), 1000)
    return () => clearTimeout(timer)
  }, [anyActive, tick])

  const refresh = () => setTick((t) => t + 1)
  const show = (runId: string | null) =>
    navigate(`/flows/${id}/runs${runId ? `?run=${encodeURIComponent(runId)}` : ''}`, { replace: true })

  return (
    <Page
      title={`Runs: ${flow?.name ?? 'flow'}`}
      actions={
        <>
          <Link to={`/flows/${id}`} class="button">
            Edit the flow
          </Link>
          <Button onClick={refresh}>Refresh</Button>
        </>
      }
    >
      <ProblemNote problem={problem} />
      {selected ? (
        <RunDetail
          key={selected}
          runId={selected}
          onClose={() => show(null)}
          onChanged={refresh}
          onRetried={(runId) => {
            refresh()
            show(runId)
          }}
        />
      ) : null}
      <section aria-labelledby="runs-title">
        <div class="flow-runs-head">
          <h2 id="runs-title">Runs</h2>
          <label class="inline-label">
            Status{' '}
            <select
              value={status}
              onChange={(e) => {
                setPage(1)
                setStatus((e.currentTarget as HTMLSelectElement).value as RunStatus | '')
              }}
            >
              <option value="">any</option>
              {statuses.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
        </div>
        {!runs ? (
          <p role="status">Loading…</p>
        ) : runs.data.length === 0 ? (
          <p class="empty">No runs{status ? ` with status ${status}` : ''} yet.</p>
        ) : (
          <>
            <div class="table-wrap">
              <table class="data flow-runs-table">
                <caption class="visually-hidden">Runs, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Run</th>
                    <th scope="col">Status</th>
                    <th scope="col">Started</th>
                    <th scope="col">Duration</th>
                    <th scope="col">Version</th>
                    <th scope="col">Error</th>
                  </tr>
                </thead>
                <tbody>
                  {runs.data.map((r) => (
                    <tr key={r.runId} aria-current={r.runId === selected ? 'true' : undefined}>
                      <td>
                        <Link to={`/flows/${id}/runs?run=${encodeURIComponent(r.runId)}`}>
                          <span class="mono">{r.runId.slice(0, 8)}</span>
                          <span class="visually-hidden"> (open the step log)</span>
                        </Link>
                        {r.retryOf ? <span class="hint-inline"> retry</span> : null}
                      </td>
                      <td>
                        <span class={`badge run-${r.status}`}>{r.status}</span>
                      </td>
                      <td>{when(r.startedAt ?? r.createdAt)}</td>
                      <td>{duration(r.durationMs)}</td>
                      <td>v{r.version}</td>
                      <td>{r.error ? errorText(r.error) : ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <div class="inline flow-pager">
              <Button disabled={page === 1} onClick={() => setPage(page - 1)}>
                Newer
              </Button>
              <span class="hint-inline">
                Page {page} · {runs.total} runs
              </span>
              <Button disabled={!runs.hasMore} onClick={() => setPage(page + 1)}>
                Older
              </Button>
            </div>
          </>
        )}
      </section>
      <QuotasCard tick={tick} />
    </Page>
  )
}

function RunDetail(props: {
  runId: string
  onClose: () => void
  onChanged: () => void
  onRetried: (runId: string) => void
}) {
  const [run, setRun] = useState<FlowRunDetail | null>(null)
  const [problem, setProblem] = useState<Problem | null>(null)
  const [busy, setBusy] = useState(false)
  const [tick, setTick] = useState(0)
  useEffect(() => {
    let live = true
    client.flows.run(props.runId).then(
      (r) => {
        if (!live) return
        setRun(r)
        if (active(r.status)) setTimeout(() => live && setTick((t) => t + 1), 1000)
      },
      (err) => live && setProblem(problemOf(err)),
    )
    return () => {
      live = false
    }
  }, [props.runId, tick])

  const act = async (work: () => Promise<void>) => {
    setBusy(true)
    setProblem(null)
    try {
      await work()
    } catch (err) {
      setProblem(problemOf(err))
    } finally {
      setBusy(false)
    }
  }

  return (
    <section class="card flow-run-detail" aria-labelledby="run-title">
      <div class="flow-runs-head">
        <h2 id="run-title">
          Run <span class="mono">{props.runId.slice(0, 8)}</span>
        </h2>
        <div class="inline">
          {run && active(run.status) ? (
            <Button
              variant="danger"
              disabled={busy}
              onClick={() =>
                act(async () => {
                  await client.flows.cancel(run.runId)
                  setTick((t) => t + 1)
                  props.onChanged()
                })
              }
            >
              Cancel run
            </Button>
          ) : null}
          {run && retryable.includes(run.status) ? (
            <Button
              disabled={busy}
              onClick={() =>
                act(async () => {
                  const started = await client.flows.retry(run.runId)
                  props.onRetried(started.runId)
                })
              }
            >
              Retry
            </Button>
          ) : null}
          <Button onClick={props.onClose}>Close</Button>
        </div>
      </div>
      <ProblemNote problem={problem} />
      {!run ? (
        problem ? null : (
          <p role="status">Loading…</p>
        )
      ) : (
        <>
          <dl class="flow-facts">
            <div>
              <dt>Status</dt>
              <dd>
                <span class={`badge run-${run.status}`}>{run.status}</span>
              </dd>
            </div>
            <div>
              <dt>Started</dt>
              <dd>{when(run.startedAt ?? run.createdAt)}</dd>
            </div>
            <div>
              <dt>Duration</dt>
              <dd>{duration(run.durationMs)}</dd>
            </div>
            <div>
              <dt>Version</dt>
              <dd>v{run.version}</dd>
            </div>
            <div>
              <dt>Trigger</dt>
              <dd>{run.triggerType}</dd>
            </div>
            <div>
              <dt>Acted as</dt>
              <dd>
                {run.actingAs.kind}
                {run.actingAs.cappedBy ? ' (capped by the publisher)' : ''}
              </dd>
            </div>
            {run.retryOf ? (
              <div>
                <dt>Retry of</dt>
                <dd class="mono">{run.retryOf.slice(0, 8)}</dd>
              </div>
            ) : null}
          </dl>
          {run.error ? <p class="flow-errors">Error: {errorText(run.error)}</p> : null}
          {run.redacted ? (
            <p class="hint">
              The trigger payload and the steps' input, output and logs are hidden: this run acted as someone whose data
              your role cannot read.
            </p>
          ) : (
            <details class="flow-trigger-payload">
              <summary>Trigger payload</summary>
              <pre tabIndex={0} aria-label="Trigger payload">
                {pretty(run.trigger)}
              </pre>
            </details>
          )}
          <h3>Step log</h3>
          <StepTrace
            steps={run.stepLogs.map((s) => ({
              key: s.key,
              type: s.type,
              status: s.status,
              input: s.input,
              output: s.output,
              error: s.error,
              durationMs: s.durationMs,
              attempts: s.attempts,
              logs: s.logs,
              unresolved: s.unresolved,
            }))}
          />
        </>
      )}
    </section>
  )
}

const quotaRows: { label: string; usage: string; limit: string; unit?: string }[] = [
  { label: 'Flows', usage: 'flows', limit: 'maxFlows' },
  { label: 'Runs this hour', usage: 'runsThisHour', limit: 'maxRunsPerHour' },
  { label: 'Concurrent runs', usage: 'concurrentRuns', limit: 'maxConcurrentRuns' },
  { label: 'Waiting runs', usage: 'pendingRuns', limit: 'maxPendingRuns' },
  { label: 'AI tokens today', usage: 'aiTokensToday', limit: 'maxAiTokensPerDay' },
  { label: 'Emails today', usage: 'emailsToday', limit: 'maxEmailsPerDay' },
]

function QuotasCard(props: { tick: number }) {
  const [quotas, setQuotas] = useState<Quotas | null>(null)
  const [problem, setProblem] = useState<Problem | null>(null)
  useEffect(() => {
    flowsApi.quotas().then(setQuotas, (err) => setProblem(problemOf(err)))
  }, [props.tick])
  return (
    <section class="card flow-quotas" aria-labelledby="quotas-title">
      <h2 id="quotas-title">Project quotas</h2>
      <ProblemNote problem={problem} />
      {quotas ? (
        <>
          <dl class="flow-facts">
            {quotaRows.map((q) => {
              const usage = quotas.usage[q.usage] ?? 0
              const limit = quotas.limits[q.limit] ?? 0
              return (
                <div key={q.label}>
                  <dt>{q.label}</dt>
                  <dd>
                    <meter min={0} max={limit || 1} value={usage} aria-label={`${q.label}: ${usage} of ${limit}`} />{' '}
                    {usage} / {limit}
                  </dd>
                </div>
              )
            })}
          </dl>
          <p class="hint">
            Each run may take at most {duration(quotas.limits.maxExecutionMs)}; scripts{' '}
            {duration(quotas.limits.maxScriptCpuMs)} of CPU.
          </p>
        </>
      ) : null}
    </section>
  )
}
