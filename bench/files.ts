import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { mkdir, open, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cpuSeconds, startPlinth } from './support.js'

// 1 MB files through the API (upload-token, PUT to the presigned URL, confirm-upload, download-token, GET the
// bytes) against the same bytes written to disk (with the fsync the local driver does) and read back directly,
// in the same run, rounds alternating. The ratio is files per second through the API over files per second
// on the bare disk. Target ≥ 0.1 (measured about 0.14 on the 2-core machine): each API file is five HTTP
// requests, a signed URL each way, a SHA-256 pass and metadata rows in SQLite, where the baseline is one
// write, one fsync and one read.
const fileBytes = 1024 * 1024
const filesPerRound = Number(process.env.BENCH_FILES ?? 40)
const concurrency = 4
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
const target = 0.1

async function json(url: string, init: RequestInit): Promise<any> {
  const res = await fetch(url, init)
  const text = await res.text()
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url.split('?')[0]}: ${res.status} ${text.slice(0, 300)}`)
  return text === '' ? null : JSON.parse(text)
}

async function throughApi(base: string, token: string, bytes: Buffer): Promise<void> {
  const auth = { authorization: `Bearer ${token}` }
  const reserved = await json(`${base}/api/v1/files/upload-token`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ filename: 'bench.bin', mime_type: 'application/octet-stream', size_bytes: bytes.length }),
  })
  await json(reserved.uploadUrl, {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream' },
    body: bytes,
  })
  await json(`${base}/api/v1/files/confirm-upload/${reserved.id}`, { method: 'POST', headers: auth })
  const { downloadUrl } = await json(`${base}/api/v1/files/download-token/${reserved.id}`, { headers: auth })
  const res = await fetch(downloadUrl)
  const got = Buffer.from(await res.arrayBuffer())
  if (!res.ok || got.length !== bytes.length) throw new Error(`download: ${res.status}, ${got.length} bytes`)
}

async function onDisk(dir: string, i: number, bytes: Buffer): Promise<void> {
  const folder = join(dir, String(i))
  await mkdir(folder, { recursive: true })
  const path = join(folder, 'bench.bin')
  const handle = await open(path, 'w')
  try {
    await handle.write(bytes)
    await handle.datasync()
  } finally {
    await handle.close()
  }
  const got = await readFile(path)
  if (got.length !== bytes.length) throw new Error('disk read came back short')
}

/** `filesPerRound` files, `concurrency` at a time; files per second. */
async function round(one: (i: number) => Promise<void>): Promise<number> {
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < filesPerRound) await one(next++)
    }),
  )
  return filesPerRound / ((performance.now() - started) / 1000)
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

export async function benchFiles(): Promise<{ ok: boolean }> {
  const plinth = await startPlinth({ PASSWORD_HASH_ITERATIONS: '1000' })
  const diskDir = mkdtempSync(join(tmpdir(), 'plinth-bench-disk-'))
  try {
    const signUp = await json(`${plinth.url}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bench@example.com', password: 'bench password', name: 'Bench' }),
    })
    const token = signUp.token as string
    const bytes = randomBytes(fileBytes)
    const api = () => round(() => throughApi(plinth.url, token, bytes))
    const disk = () => round(async (i) => onDisk(diskDir, i, bytes))
    await disk() // warm-up, discarded
    await api()
    const ratios: number[] = []
    const apiRates: number[] = []
    const diskRates: number[] = []
    const cpuBefore = cpuSeconds(plinth.process.pid)
    for (let r = 0; r < rounds; r++) {
      await rm(diskDir, { recursive: true, force: true })
      const d = await disk()
      const a = await api()
      diskRates.push(d)
      apiRates.push(a)
      ratios.push(a / d)
    }
    const cpuAfter = cpuSeconds(plinth.process.pid)
    const ratio = median(ratios)
    const cpu =
      cpuBefore !== null && cpuAfter !== null
        ? `, ${(((cpuAfter - cpuBefore) * 1000) / (rounds * filesPerRound)).toFixed(1)} ms server CPU/file`
        : ''
    const ok = ratio >= target
    console.log(
      `files (1 MB: upload-token + PUT + confirm + download-token + GET): ${median(apiRates).toFixed(1)} files/s${cpu} ` +
        `vs disk write+fsync+read ${median(diskRates).toFixed(1)} files/s\n` +
        `  ratio ${ratio.toFixed(2)} (median of ${ratios.map((x) => x.toFixed(2)).join(', ')}; target ≥ ${target}) ${ok ? 'OK' : 'BELOW TARGET'}`,
    )
    return { ok }
  } finally {
    await plinth.stop()
    rmSync(diskDir, { recursive: true, force: true })
  }
}
