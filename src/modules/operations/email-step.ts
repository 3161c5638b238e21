import type { EmailService } from '../email/index.js'
import type { OperationContext } from './types.js'

/**
 * What send_email needs of `ctx.services` (app.ts wires the email service; the automate module adds the
 * project's quota limits): sending as the run's principal, and the maxEmailsPerDay it is counted against.
 */
export interface EmailServices {
  readonly email: Pick<EmailService, 'send'>
  readonly quotas: { limits(projectId: string): Promise<{ readonly maxEmailsPerDay: number }> }
}

/** The run's email services. */
export function emailServicesOf(ctx: OperationContext): EmailServices {
  return ctx.services
}
