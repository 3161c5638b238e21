import { describe, expect, it } from 'vitest'
import { contentDisposition } from './disposition.js'

describe('contentDisposition', () => {
  it.each([
    ['report.pdf', 'attachment; filename="report.pdf"'],
    ['two words.txt', 'attachment; filename="two words.txt"'],
    ['Fête.png', `attachment; filename="F_te.png"; filename*=UTF-8''F%C3%AAte.png`],
    ['say "hi".txt', `attachment; filename="say _hi_.txt"; filename*=UTF-8''say%20%22hi%22.txt`],
    ['back\\slash', `attachment; filename="back_slash"; filename*=UTF-8''back%5Cslash`],
    ['line\r\nbreak', `attachment; filename="line__break"; filename*=UTF-8''line%0D%0Abreak`],
    ["it's (1)*.txt", `attachment; filename="it's (1)*.txt"`],
    ['日本.txt', `attachment; filename="__.txt"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.txt`],
    ['', `attachment; filename="download"; filename*=UTF-8''`],
  ])('%j → %s', (name, header) => {
    expect(contentDisposition(name)).toBe(header)
  })

  it('encodes the characters RFC 8187 reserves in filename*', () => {
    expect(contentDisposition("é'(*)")).toBe(`attachment; filename="_'(*)"; filename*=UTF-8''%C3%A9%27%28%2A%29`)
  })

  it('can say inline', () => {
    expect(contentDisposition('a.png', 'inline')).toBe('inline; filename="a.png"')
  })

  it('never lets a header break out', () => {
    for (const name of ['a\r\nSet-Cookie: x=1', 'a"\r\n', '\u0000'])
      expect(contentDisposition(name)).not.toMatch(/[\r\n\0]/)
  })
})
