import { EventEmitter } from 'node:events'
import { describe, expect, it } from 'vitest'
import { PromptCancelled, readSecret } from './secret-prompt.js'

/** A terminal that records raw-mode changes; `type` delivers keystrokes as a TTY in raw mode does. */
function fakeTerminal() {
  const events = new EventEmitter()
  const rawModes: boolean[] = []
  let output = ''
  return {
    rawModes,
    output: () => output,
    writer: { write: (text: string) => (output += text) },
    type: (chunk: string) => events.emit('data', Buffer.from(chunk)),
    input: {
      isTTY: true,
      setRawMode: (raw: boolean) => rawModes.push(raw),
      on: (event: 'data', listener: (chunk: Buffer | string) => void) => events.on(event, listener),
      off: (event: 'data', listener: (chunk: Buffer | string) => void) => events.off(event, listener),
      resume: () => {},
      pause: () => {},
    },
  }
}

describe('readSecret', () => {
  const cases: { name: string; keys: string[]; value: string }[] = [
    { name: 'a line ended by Enter', keys: ['s3cret pass', '\r'], value: 's3cret pass' },
    { name: 'Backspace removes the last character', keys: ['abcd', '\u007f\u007f', 'X\r'], value: 'abX' },
    { name: 'one chunk holding the line and its newline', keys: ['pässwörd\n'], value: 'pässwörd' },
    { name: 'control characters other than the handled ones are dropped', keys: ['a\u001bb\r'], value: 'ab' },
  ]
  for (const c of cases) {
    it(`${c.name}: nothing typed is echoed, raw mode is on while reading and off after`, async () => {
      const t = fakeTerminal()
      const answer = readSecret(t.input, t.writer, 'Password: ')
      for (const key of c.keys) t.type(key)
      expect(await answer).toBe(c.value)
      expect(t.output()).toBe('Password: \n')
      expect(t.rawModes).toEqual([true, false])
    })
  }

  it('Ctrl-C and Ctrl-D cancel, raw mode restored', async () => {
    for (const key of ['\u0003', '\u0004']) {
      const t = fakeTerminal()
      const answer = readSecret(t.input, t.writer, 'Password: ')
      t.type(`partial${key}`)
      await expect(answer).rejects.toBeInstanceOf(PromptCancelled)
      expect(t.rawModes).toEqual([true, false])
      expect(t.output()).not.toContain('partial')
    }
  })
})
