import type { DownloadLink, PlinthFile } from '@plinth/client'
import { useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../api.js'
import { Dialog } from './dialog.js'
import { Button, ProblemNote } from './form.js'
import { useAsync } from './use-async.js'
import { formatBytes, Loaded, Time, TableWrap } from './system-list.js'

/** Images the server makes variants of (a thumbnail and the project's named sizes). */
export const isImage = (file: PlinthFile) => file.mimeType === 'image/jpeg' || file.mimeType === 'image/png'

/** One file: its metadata, a preview, and every variant with a download link. */
export function FileDetails(props: { id: string; onClose: () => void; onChanged: () => void }) {
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
