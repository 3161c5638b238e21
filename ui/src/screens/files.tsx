import type { PlinthFile } from '@plinth/client'
import { useEffect, useRef, useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../api.js'
import { FileDetails, isImage } from '../components/files-details.js'
import { Button, Field, ProblemNote } from '../components/form.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import { ConfirmDialog } from '../components/system-confirm.js'
import { formatBytes, Loaded, Pager, Time, TableWrap } from '../components/system-list.js'
import type { ScreenProps } from '../screen-props.js'
import './system.css'

const limit = 25

/** The project's files: upload (presigned, with progress), previews, details with variants, delete. */
export function Files(_props: ScreenProps) {
  const [page, setPage] = useState(1)
  const [collection, setCollection] = useState('')
  const list = useAsync(
    () => client.files.list({ page, limit, collection: collection || undefined }),
    [page, collection],
  )
  const collections = useCollectionNames()
  const [open, setOpen] = useState<string | null>(null)
  const [deleting, setDeleting] = useState<PlinthFile | null>(null)

  return (
    <Page title="Files">
      <Upload collections={collections} onUploaded={() => void list.reload()} />
      <h2>
        {collection ? `Files attached to ${collection === '__system' ? 'no collection' : collection}` : 'All files'}
      </h2>
      {collections.length > 0 ? (
        <div class="system-filters">
          <Field label="Attached to">
            {(id) => (
              <select
                id={id}
                value={collection}
                onChange={(e) => {
                  setPage(1)
                  setCollection(e.currentTarget.value)
                }}
              >
                <option value="">Any collection, or none</option>
                <option value="__system">No collection</option>
                {collections.map((name) => (
                  <option key={name} value={name}>
                    {name}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
      ) : null}
      <Loaded value={list.value} problem={list.problem} loading={list.loading}>
        {(result) =>
          result.data.length === 0 ? (
            <p class="empty">{collection ? 'No files here.' : 'No files yet. Upload one above.'}</p>
          ) : (
            <>
              <TableWrap label="Files">
                <table class="data">
                  <caption class="system-visually-hidden">Files, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Preview</th>
                      <th scope="col">Name</th>
                      <th scope="col">Type</th>
                      <th scope="col">Size</th>
                      <th scope="col">Visibility</th>
                      <th scope="col">Created</th>
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    {result.data.map((file) => (
                      <tr key={file.id}>
                        <td>
                          <Thumb file={file} onReady={() => void list.reload()} />
                        </td>
                        <td class="files-name">{file.filename}</td>
                        <td class="system-mono">{file.mimeType}</td>
                        <td class="system-nowrap">{formatBytes(file.sizeBytes)}</td>
                        <td>
                          <span class="badge">{file.visibility}</span>
                        </td>
                        <td class="system-nowrap">
                          <Time value={file.createdAt} />
                        </td>
                        <td>
                          <div class="system-actions">
                            <Button onClick={() => setOpen(file.id)} aria-label={`Details of ${file.filename}`}>
                              Details
                            </Button>
                            <Button
                              variant="danger"
                              onClick={() => setDeleting(file)}
                              aria-label={`Delete ${file.filename}`}
                            >
                              Delete
                            </Button>
                          </div>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
              <Pager {...result} onPage={setPage} label="Pages of files" />
            </>
          )
        }
      </Loaded>
      {open ? <FileDetails id={open} onClose={() => setOpen(null)} onChanged={() => void list.reload()} /> : null}
      {deleting ? (
        <ConfirmDialog
          title="Delete this file?"
          confirmLabel="Delete"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await client.files.delete(deleting.id)
            await list.reload()
          }}
        >
          <p>
            <strong>{deleting.filename}</strong> and its image sizes are removed from storage. Records that name it keep
            its id.
          </p>
        </ConfirmDialog>
      ) : null}
    </Page>
  )
}

/** The names of the collections the caller sees (empty when it may not list them). */
function useCollectionNames(): string[] {
  const names = useAsync(
    async () =>
      (await client.transport.request<{ data: { name: string }[] }>('GET', '/api/v1/collections')).data
        .map((c) => c.name)
        .sort(),
    [],
  )
  return names.value ?? []
}

/** Choose a file and its visibility; the bytes go straight to storage through the presigned URL. */
function Upload(props: { collections: string[]; onUploaded: () => void }) {
  const [file, setFile] = useState<File | null>(null)
  const [collection, setCollection] = useState('')
  const [visibility, setVisibility] = useState<'public' | 'private'>('public')
  const [progress, setProgress] = useState<{ loaded: number; total: number } | null>(null)
  const [problem, setProblem] = useState<Problem | null>(null)
  const [done, setDone] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [inputKey, setInputKey] = useState(0)
  const [abort, setAbort] = useState<AbortController | null>(null)

  async function submit(event: Event) {
    event.preventDefault()
    if (!file) return
    setBusy(true)
    setProblem(null)
    setDone(null)
    setProgress({ loaded: 0, total: file.size })
    const controller = new AbortController()
    setAbort(controller)
    try {
      const uploaded = await client.files.upload(file, {
        signal: controller.signal,
        visibility,
        collection: collection || undefined,
        contentType: file.type || 'application/octet-stream',
        onProgress: (p) => setProgress(p),
      })
      setDone(`Uploaded ${uploaded.filename}.`)
      setFile(null)
      setInputKey((k) => k + 1)
      // The list shows the new row; while its sizes are being made, its preview cell reloads the list.
      props.onUploaded()
    } catch (err) {
      if (controller.signal.aborted) {
        setProgress(null)
        setDone('Upload cancelled.')
        props.onUploaded()
      } else setProblem(problemOf(err))
    } finally {
      setAbort(null)
      setBusy(false)
    }
  }

  const percent = progress && progress.total > 0 ? Math.round((progress.loaded / progress.total) * 100) : 0
  return (
    <form class="card" onSubmit={submit} aria-labelledby="upload-title">
      <h2 id="upload-title">Upload</h2>
      <div class="files-upload">
        <Field label="File">
          {(id) => (
            <input
              key={inputKey}
              id={id}
              type="file"
              required
              onChange={(e) => setFile((e.currentTarget as HTMLInputElement).files?.[0] ?? null)}
            />
          )}
        </Field>
        <Field label="Visibility" hint="Public: all who may read files. Private: you and administrators.">
          {(id, describedBy) => (
            <select
              id={id}
              aria-describedby={describedBy}
              value={visibility}
              onChange={(e) => setVisibility((e.currentTarget as HTMLSelectElement).value as 'public' | 'private')}
            >
              <option value="public">Public</option>
              <option value="private">Private</option>
            </select>
          )}
        </Field>
        {props.collections.length > 0 ? (
          <Field label="Attach to" hint="A collection whose records will name it">
            {(id, describedBy) => (
              <select
                id={id}
                aria-describedby={describedBy}
                value={collection}
                onChange={(e) => setCollection(e.currentTarget.value)}
              >
                <option value="">No collection</option>
                {props.collections.map((name) => (
                  <option key={name} value={name}>
                    {name}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : null}
        <Button type="submit" variant="primary" disabled={!file || busy}>
          Upload
        </Button>
        {abort ? <Button onClick={() => abort.abort()}>Cancel upload</Button> : null}
      </div>
      {progress ? (
        <div class="files-progress">
          <progress max={100} value={percent} aria-label="Upload progress" aria-valuetext={`${percent}%`} />
          <span>{percent}%</span>
        </div>
      ) : null}
      <ProblemNote problem={problem} />
      {done ? (
        <p class="system-status system-ok" role="status">
          {done}
        </p>
      ) : null}
    </form>
  )
}

/** A row's preview: the server-made thumbnail of an image, through a short-lived download URL. */
function Thumb(props: { file: PlinthFile; onReady: () => void }) {
  const { file } = props
  const [url, setUrl] = useState<string | null>(null)
  const ready = isImage(file) && (file.variantStatus === 'ready' || file.variants.thumbnail !== undefined)
  useEffect(() => {
    if (!ready) return
    let live = true
    client.files
      .downloadUrl(file.id, { variant: 'thumbnail' })
      .then((link) => live && setUrl(link.url))
      .catch(() => live && setUrl(null))
    return () => {
      live = false
    }
  }, [file.id, file.updatedAt, ready])
  // While the server makes the sizes, the list is read again each second (for a minute at most).
  const polls = useRef(0)
  useEffect(() => {
    if (!isImage(file) || file.variantStatus !== 'pending' || polls.current >= 60) return
    polls.current++
    const timer = setTimeout(props.onReady, 1000)
    return () => clearTimeout(timer)
  }, [file])
  if (url) return <img class="files-thumb" src={url} alt={`Preview of ${file.filename}`} loading="lazy" />
  if (isImage(file) && file.variantStatus === 'pending') return <span class="files-thumb-none">Making preview</span>
  return <span class="files-thumb-none">No preview</span>
}
