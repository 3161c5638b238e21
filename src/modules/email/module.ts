import type { AppModule } from '../../lib/module.js'
import { emailRoutes } from './routes.js'
import { createEmailService, type EmailDeps } from './service.js'

/**
 * Email (decision 037): send_email's sending (reached by flows as `ctx.services.email`), the message
 * delivery log and its read route, the signed receipt webhook, and `emailsToday` for the quotas service.
 */
export function createEmailModule(deps: EmailDeps) {
  const service = createEmailService(deps)
  return { service, routers: ({ security }) => [emailRoutes(service, security)] } satisfies AppModule
}
