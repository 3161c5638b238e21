import type { AiChatInput, AiImageInput, AiSteps } from './ai-step.js'
import { testContext } from './test-context.js'
import type { OperationDefinition } from './types.js'

/**
 * The AI operations' unit-test rig: a fake `ctx.services.ai` answering each chat with the next scripted
 * text (10 tokens) and recording what it was asked. The providers, the quota and files are tested in
 * lib/ai and over HTTP (test/api/automate-ai.test.ts).
 */
export function aiRig(...answers: string[]) {
  const chats: AiChatInput[] = []
  const images: AiImageInput[] = []
  const ai: AiSteps = {
    async chat(_principal, input) {
      chats.push(input)
      return {
        text: answers.shift() ?? 'ok',
        model: input.model ?? 'test-model',
        provider: input.provider ?? 'cloudflare',
        tokens: 10,
        tokensEstimated: false,
      }
    },
    async image(_principal, input) {
      images.push(input)
      return {
        file: {
          id: 'file-1',
          r2Key: `p1/files/file-1/${input.name}.png`,
          filename: `${input.name}.png`,
          mimeType: 'image/png',
          sizeBytes: 68,
          visibility: 'public',
        },
        model: input.model ?? 'image-model',
        provider: 'cloudflare',
        tokens: 1003,
        tokensEstimated: true,
      }
    },
  }
  const { ctx } = testContext({}, { services: { ai }, key: 'gen' })
  /** Runs the operation with a config checked (defaults filled) by its schema. */
  const run = (definition: OperationDefinition, config: Record<string, unknown>) =>
    definition.run(definition.configSchema.parse(config), ctx) as Promise<Record<string, any>>
  /** The system and user messages of the last chat. */
  const last = () => {
    const input = chats[chats.length - 1]!
    return {
      ...input,
      system: input.messages.find((m) => m.role === 'system')?.content ?? '',
      user: input.messages.find((m) => m.role === 'user')?.content ?? '',
    }
  }
  return { ai, chats, images, ctx, run, last }
}

/** The step error a run fails with (or null when it does not fail). */
export async function failureOf(promise: Promise<unknown>): Promise<any> {
  return promise.then(
    () => null,
    (err: unknown) => err,
  )
}
