import { useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../api.js'
import { useAsync } from './use-async.js'
import { Button, Field, ProblemNote } from './form.js'
import { TableWrap } from './system-list.js'
import type { CollectionInfo } from './access-common.js'

interface Preview {
  allowed: boolean
  reason: string | null
  as: string
  data: Record<string, unknown>[]
  hidden: number
}

const shown = (value: unknown): string =>
  value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value)

/**
 * "What can this role see", run against the records: the first rows of a collection read as a person holding
 * the role (GET /api/v1/roles/:id/preview, decision 079), never more than the viewer may read themselves.
 */
export function RolePreview(props: { roleId: string; collections: readonly CollectionInfo[] }) {
  const [collection, setCollection] = useState(props.collections[0]?.name ?? '')
  const [as, setAs] = useState('')
  const [preview, setPreview] = useState<Preview | null>(null)
  const [problem, setProblem] = useState<Problem | null>(null)
  const [busy, setBusy] = useState(false)
  const users = useAsync(
    () =>
      client.transport
        .request<{ data: { id: string; name: string; email: string | null }[] }>('GET', '/api/v1/users', {
          query: { limit: 100 },
        })
        .then((r) => r.data)
        .catch(() => []),
    [],
  )

  async function run(event: Event) {
    event.preventDefault()
    setBusy(true)
    setProblem(null)
    try {
      const reply = await client.transport.request<{ data: Preview }>(
        'GET',
        `/api/v1/roles/${encodeURIComponent(props.roleId)}/preview`,
        { query: { collection, as: as || undefined, limit: 25 } },
      )
      setPreview(reply.data)
    } catch (err) {
      setPreview(null)
      setProblem(problemOf(err))
    } finally {
      setBusy(false)
    }
  }

  const columns = preview ? [...new Set(preview.data.flatMap((row) => Object.keys(row)))] : []
  return (
    <section class="card" aria-labelledby="preview-title">
      <h2 id="preview-title">Preview with the records</h2>
      <p class="hint">
        The first rows a person holding this role would read, with `$CURRENT_USER` as the person you choose. Rows and
        fields you may not read yourself are left out.
      </p>
      {props.collections.length === 0 ? (
        <p class="empty">No collections yet.</p>
      ) : (
        <form class="inline" onSubmit={run}>
          <Field label="Collection">
            {(id) => (
              <select
                id={id}
                value={collection}
                onChange={(e) => setCollection((e.currentTarget as HTMLSelectElement).value)}
              >
                {props.collections.map((c) => (
                  <option key={c.name} value={c.name}>
                    {c.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="As the person">
            {(id) => (
              <select id={id} value={as} onChange={(e) => setAs((e.currentTarget as HTMLSelectElement).value)}>
                <option value="">Me</option>
                {(users.value ?? []).map((u) => (
                  <option key={u.id} value={u.id}>
                    {u.name || u.email || u.id}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Button type="submit" variant="primary" disabled={busy || !collection}>
            {busy ? 'Reading…' : 'Show what it sees'}
          </Button>
        </form>
      )}
      <ProblemNote problem={problem} />
      {preview ? (
        <div role="status">
          {!preview.allowed ? (
            <p>
              This role cannot list {collection}: {preview.reason}
            </p>
          ) : preview.data.length === 0 && preview.hidden === 0 ? (
            <p>This role sees no records in {collection}.</p>
          ) : (
            <>
              <p>
                {preview.data.length} record{preview.data.length === 1 ? '' : 's'} shown
                {preview.hidden > 0 ? `; ${preview.hidden} more it sees that you may not read are left out` : ''}.
              </p>
              {preview.data.length > 0 ? (
                <TableWrap label={`Records the role sees in ${collection}`}>
                  <table class="data">
                    <thead>
                      <tr>
                        {columns.map((c) => (
                          <th key={c} scope="col">
                            {c}
                          </th>
                        ))}
                      </tr>
                    </thead>
                    <tbody>
                      {preview.data.map((row) => (
                        <tr key={shown(row.id)}>
                          {columns.map((c) => (
                            <td key={c}>{shown(row[c])}</td>
                          ))}
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableWrap>
              ) : null}
            </>
          )}
        </div>
      ) : null}
    </section>
  )
}
