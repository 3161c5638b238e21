import type { CliIo } from './context.js'

export async function runDoctor(_argv: string[], _io: CliIo): Promise<number> {
  return 0
}
