/** A terminal's input as the prompt needs it: raw mode (so typed characters are not echoed) and its data. */
export interface TerminalInput {
  isTTY?: boolean
  setRawMode(raw: boolean): unknown
  on(event: 'data', listener: (chunk: Buffer | string) => void): unknown
  off(event: 'data', listener: (chunk: Buffer | string) => void): unknown
  resume(): unknown
  pause(): unknown
}

/** The user pressed Ctrl-C or Ctrl-D before Enter. */
export class PromptCancelled extends Error {}

/**
 * Reads one line from a terminal without echoing it: raw mode on, the question written to `output` (stderr,
 * so stdout stays clean), characters collected until Enter, Backspace honoured, Ctrl-C and Ctrl-D cancel.
 * Raw mode is restored on every way out.
 */
export function readSecret(
  input: TerminalInput,
  output: { write(text: string): unknown },
  question: string,
): Promise<string> {
  output.write(question)
  return new Promise((resolve, reject) => {
    let value = ''
    const finish = (error?: Error) => {
      input.off('data', onData)
      input.setRawMode(false)
      input.pause()
      output.write('\n')
      if (error) reject(error)
      else resolve(value)
    }
    const onData = (chunk: Buffer | string) => {
      for (const char of chunk.toString()) {
        if (char === '\r' || char === '\n') return finish()
        if (char === '\u0003' || char === '\u0004') return finish(new PromptCancelled('cancelled'))
        if (char === '\u007f' || char === '\b') value = [...value].slice(0, -1).join('')
        else if (char >= ' ') value += char
      }
    }
    input.setRawMode(true)
    input.on('data', onData)
    input.resume()
  })
}
