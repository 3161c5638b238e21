import type { DownloadLink, PlinthFile } from '@plinth/client'
import { useEffect, useRef, useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../api.js'
import { Dialog } from '../components/dialog.js'
import { Button, Field, ProblemNote } from '../components/form.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import { ConfirmDialog } from '../components/system-confirm.js'
import { formatBytes, Loaded, Pager, Time, TableWrap } from '../components/system-list.js'
import type { ScreenProps } from '../screen-props.js'
import './system.css'

const limit = 25

/** Images the server makes variants of (a thumbnail and the project's named sizes). */
const isImage = (file: PlinthFile) => file.mimeType === 'image/jpeg' || file.mimeType === 'image/png'

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

/** One file: its metadata, a preview, and every variant with a download link. */
function FileDetails(props: { id: string; onClose: () => void; onChanged: () => void }) {
  const [regen, setRegen] = useState<{ busy: boolean; message?: string; problem?: Problem }>({ busy: false })
  async function regenerate() {
    setRegen({ busy: true })
    try {
      const result = await client.files.regenerate(props.id)
      const message =
        result.status === 'regenerated'
          ? 'The sizes were made again.'
          : `${result.status === 'skipped' ? 'Skipped' : 'Failed'}: ${result.reason ?? 'no reason given'}.`
      setRegen({ busy: false, message })
      await detail.reload()
      props.onChanged()
    } catch (err) {
      setRegen({ busy: false, problem: problemOf(err) })
    }
  }
  const detail = useAsync(async () => {
    const file = await client.files.get(props.id)
    const names = ['original', ...Object.keys(file.variants)]
    const links: Record<string, DownloadLink> = {}
    await Promise.all(
      names.map(async (name) => {
        links[name] = await client.files.downloadUrl(file.id, name === 'original' ? {} : { variant: name })
      }),
    )
    return { file, links }
  }, [props.id])
  return (
    <Dialog title="File details" onClose={props.onClose}>
      <div class="system-dialog-body">
        <Loaded value={detail.value} problem={detail.problem} loading={detail.loading}>
          {({ file, links }) => {
            const previewName = ['medium', 'small', 'thumbnail'].find((n) => links[n] && file.variants[n])
            const preview = isImage(file) ? links[previewName ?? 'original'] : undefined
            return (
              <>
                {preview ? <img class="files-preview" src={preview.url} alt={`Preview of ${file.filename}`} /> : null}
                <dl class="files-meta">
                  <dt>Name</dt>
                  <dd>{file.filename}</dd>
                  <dt>Id</dt>
                  <dd class="system-mono">{file.id}</dd>
                  <dt>Type</dt>
                  <dd>{file.mimeType}</dd>
                  <dt>Size</dt>
                  <dd>{formatBytes(file.sizeBytes)}</dd>
                  <dt>Visibility</dt>
                  <dd>
                    {file.visibility === 'private'
                      ? 'Private: only its uploader and administrators see it'
                      : 'Public: everyone in the project who may read files sees it'}{' '}
                    (chosen at upload)
                  </dd>
                  <dt>Collection</dt>
                  <dd>{file.collectionName === '__system' ? 'None' : file.collectionName}</dd>
                  <dt>Created</dt>
                  <dd>
                    <Time value={file.createdAt} />
                  </dd>
                  <dt>SHA-256</dt>
                  <dd class="system-mono">{file.sha256 ?? '—'}</dd>
                  <dt>Image sizes</dt>
                  <dd>{file.variantStatus}</dd>
                </dl>
                <h3>Sizes</h3>
                <TableWrap label="Sizes of the file">
                  <table class="data">
                    <thead>
                      <tr>
                        <th scope="col">Name</th>
                        <th scope="col">Pixels</th>
                        <th scope="col">Bytes</th>
                        <th scope="col">Made by</th>
                        <th scope="col">Download</th>
                      </tr>
                    </thead>
                    <tbody>
                      <tr>
                        <td>original</td>
                        <td>—</td>
                        <td>{formatBytes(file.sizeBytes)}</td>
                        <td>upload</td>
                        <td>
                          <DownloadAnchor link={links.original} name="original" />
                        </td>
                      </tr>
                      {Object.entries(file.variants).map(([name, variant]) => (
                        <tr key={name}>
                          <td>{name}</td>
                          <td class="system-nowrap">
                            {variant.width}×{variant.height}
                          </td>
                          <td class="system-nowrap">{formatBytes(variant.sizeBytes)}</td>
                          <td>{variant.source}</td>
                          <td>
                            <DownloadAnchor link={links[name]} name={name} />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableWrap>
              </>
            )
          }}
        </Loaded>
        {regen.problem ? <ProblemNote problem={regen.problem} /> : null}
        {regen.message ? (
          <p class="system-status" role="status">
            {regen.message}
          </p>
        ) : null}
        <div class="inline">
          {detail.value && isImage(detail.value.file) ? (
            <Button disabled={regen.busy} onClick={() => void regenerate()}>
              Make the sizes again
            </Button>
          ) : null}
          <Button onClick={props.onClose}>Close</Button>
        </div>
      </div>
    </Dialog>
  )
}

function DownloadAnchor(props: { link: DownloadLink | undefined; name: string }) {
  if (!props.link) return <span>—</span>
  return (
    <a href={props.link.url} target="_blank" rel="noopener noreferrer" aria-label={`Download ${props.name}`}>
      Download
    </a>
  )
}
