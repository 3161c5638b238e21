import { z } from '../../lib/http/index.js'
import { displayName, email, password } from '../users/index.js'

export const SignedInSchema = z
  .object({
    token: z.string().openapi({ description: 'Session token: send it as `Authorization: Bearer <token>`' }),
    user: z.object({ id: z.string(), email: z.string().nullable(), name: z.string(), role: z.string() }),
  })
  .openapi('SignedIn')

export const SessionSchema = z
  .object({
    user: z.object({
      id: z.string(),
      email: z.string().nullable(),
      name: z.string(),
      role: z.string(),
      projectId: z.string(),
      username: z.string().nullable(),
      totpEnabled: z.boolean().openapi({ description: 'Two-factor sign-in is on for this account' }),
    }),
    session: z.object({ id: z.string(), expiresAt: z.number().int().openapi({ description: 'Unix seconds' }) }),
  })
  .openapi('Session')

export const SignUpBody = z.object({ email, password, name: displayName.pipe(z.string().min(1, 'is required')) })
const code = z
  .string()
  .regex(/^\d{6}$/, 'must be 6 digits')
  .optional()
  .openapi({ description: 'TOTP code, for accounts with two-factor authentication' })
export const SignInEmailBody = z.object({ email: z.string().max(254), password: z.string().max(256), code })
export const SignInUsernameBody = z.object({ username: z.string().max(64), password: z.string().max(256), code })
export const UsernameBody = z.object({ username: z.string().max(64) })
export const CodeBody = z.object({ code: z.string().regex(/^\d{6}$/, 'must be 6 digits') })
export const ResetRequestBody = z.object({
  identifier: z.string().max(254).optional().openapi({ description: 'An email or a username' }),
  email: z.string().max(254).optional(),
  redirectTo: z
    .string()
    .max(2000)
    .optional()
    .openapi({ description: 'Page that receives ?token=; must be on a trusted origin' }),
})
export const ResetBody = z.object({ token: z.string().min(1).max(200), password })
export const MagicLinkBody = z.object({ email, callbackURL: z.string().max(2000).optional() })
export const SecondFactorBody = z.object({
  mfaToken: z.string().min(1).max(200),
  code: z.string().regex(/^\d{6}$/, 'must be 6 digits'),
})

export const Status = z.object({ status: z.literal(true) })
export const Success = z.object({ success: z.literal(true) })
