import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const bin = new URL('../bin/plinth.js', import.meta.url).pathname
const freshDir = () => mkdtempSync(join(tmpdir(), 'plinth-cli-'))
// The CLI under test gets a clean environment: only what each case sets.
const baseEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }

function run(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [bin, ...args], { env: { ...baseEnv, ...env }, encoding: 'utf8', timeout: 60_000 })
}

describe('plinth CLI', () => {
  it('migrate applies pending migrations, then has nothing to do', () => {
    const dir = freshDir()
    const first = run(['migrate'], { DATA_DIR: dir })
    expect(first.status, first.stderr).toBe(0)
    expect(first.stdout).toContain('Applied: 0001-projects')
    const second = run(['migrate'], { DATA_DIR: dir })
    expect(second.status).toBe(0)
    expect(second.stdout).toContain('Nothing to apply')
  })

  it('a bad setting stops start-up with a message naming it', () => {
    const result = run(['serve'], { DATA_DIR: freshDir(), PORT: 'eighty' })
    expect(result.status).toBe(1)
    expect(result.stderr).toContain('PORT')
  })

  it('an unknown command prints usage and exits 2', () => {
    const result = run(['explode'], { DATA_DIR: freshDir() })
    expect(result.status).toBe(2)
    expect(result.stderr).toContain('Usage: plinth')
  })

  it('serve answers /health and exits 0 on SIGTERM after closing', async () => {
    const child = spawn(process.execPath, [bin, 'serve'], {
      env: { ...baseEnv, DATA_DIR: freshDir(), PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString()
        const match = output.match(/listening on (http:\/\/[\d.]+:\d+)/)
        if (match) resolve(match[1]!)
      })
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)))
    })
    const res = await fetch(`${url}/health`)
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ status: 'ok', database: 'sqlite' })
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(output).toContain('"msg":"stopped"')
  })
})
