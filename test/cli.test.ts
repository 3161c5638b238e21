import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const bin = new URL('../bin/plinth.js', import.meta.url).pathname
const version = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
  .version
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

  it('--version and -v print the version of package.json', () => {
    for (const flag of ['--version', '-v']) {
      const result = run([flag], {})
      expect(result.status, result.stderr).toBe(0)
      expect(result.stdout).toBe(`${version}\n`)
      expect(result.stderr).toBe('')
    }
  })

  it('a port in use: one line on stderr naming the port and host, no stack trace, exit 1', async () => {
    const holder = createServer()
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
    const { port } = holder.address() as AddressInfo
    try {
      // Asynchronous: the port is held by this process, whose event loop must keep running.
      const child = spawn(process.execPath, [bin, 'serve'], {
        env: { ...baseEnv, DATA_DIR: freshDir(), HOST: '127.0.0.1', PORT: String(port) },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let stderr = ''
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
      child.stdout.resume()
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
      expect(code, stderr).toBe(1)
      expect(stderr).toBe(
        `plinth: port ${port} on 127.0.0.1 is already in use (stop the process that holds it, or set PORT)\n`,
      )
      expect(stderr).not.toMatch(/\n\s+at /)
    } finally {
      await new Promise((resolve) => holder.close(resolve))
    }
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
