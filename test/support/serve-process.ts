import { spawn, type ChildProcess } from 'node:child_process'

const bin = new URL('../../bin/plinth.js', import.meta.url).pathname

/** A `plinth serve` child process and the address it listens on. */
export interface Running {
  child: ChildProcess
  url: string
  /** What it printed so far (stdout and stderr, the first MB). */
  output: () => string
}

/**
 * Starts `plinth serve` as a real process (for SIGKILL tests) with only PATH, HOME and `env`, and waits for
 * its "listening on" line; kills it if that never comes within a minute, and rejects if it exits first.
 */
export function serve(env: Record<string, string>): Promise<Running> {
  const child = spawn(process.execPath, [bin, 'serve'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`plinth did not start: ${output.slice(-2000)}`))
    }, 60_000)
    child.stdout!.on('data', (chunk: Buffer) => {
      if (output.length < 1_000_000) output += chunk.toString()
      const match = output.match(/listening on (http:\/\/[\d.]+:\d+)/)
      if (match) {
        clearTimeout(timer)
        resolve({ child, url: match[1]!, output: () => output })
      }
    })
    child.stderr!.on('data', (chunk: Buffer) => {
      if (output.length < 1_000_000) output += chunk.toString()
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`plinth exited ${code}: ${output.slice(-2000)}`))
    })
  })
}

/** SIGKILLs a server started by `serve` and waits for it to be gone (at once if it already is). */
export async function kill(running: Running): Promise<void> {
  if (running.child.exitCode !== null || running.child.signalCode !== null) return
  const exited = new Promise((resolve) => running.child.once('exit', resolve))
  running.child.kill('SIGKILL')
  await exited
}
