import { spawn } from 'node:child_process'

const bin = new URL('../../bin/plinth.js', import.meta.url).pathname

export interface CliRun {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * Runs `plinth <args>` as a real process with only PATH, HOME and `env` (nothing of the test's own
 * environment leaks in), `stdin` written and closed when given. Asynchronous: a server answering it may run
 * in the test's own process.
 */
export function runCli(args: string[], env: Record<string, string>, stdin?: string): Promise<CliRun> {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  })
  if (stdin !== undefined) child.stdin!.end(stdin)
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, stdout, stderr }))
  })
}
