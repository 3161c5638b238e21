import type { Clock } from '../../lib/clock.js'
import { AppError } from '../../lib/errors.js'
import { principals, requirePerson, type Principal } from '../../lib/principal.js'
import type { Opener } from '../records/index.js'
import { decodeToken, encodeToken, tokenPrefix, type Capability, type CapabilityClaims } from './token.js'

export const minExpiresIn = 30
export const maxExpiresIn = 600
export const defaultExpiresIn = 300

/** The record actions each capability needs, each checked on its own against its own row scope. */
export const grantsFor: Readonly<Record<Capability, readonly ('read' | 'update')[]>> = {
  read: ['read'],
  comment: ['read', 'update'],
  write: ['read', 'update'],
}

// Collection names as the collections module accepts them; an id as the records module accepts one.
const collectionName = /^[a-z][a-z0-9_]{0,49}$/
const documentId = /^[A-Za-z0-9_-]{1,64}$/

export interface MintInput {
  collection: string
  documentId: string
  capability?: Capability
  expiresIn?: number
}

/** The response object (core-api § Capability token). */
export interface CapabilityToken {
  token: string
  capability: Capability
  document: { collection: string; id: string; type: 'record' }
  subject: string
  issuedAt: number
  expiresAt: number
  expiresIn: number
  maxExpiresIn: number
}

/** A token checked at use: the subject as it is now, and what the token opens. */
export interface ResolvedCapability {
  readonly principal: Principal
  readonly claims: CapabilityClaims
}

export interface CapabilityTokensDeps {
  secretKey: string
  clock: Clock
  open: Opener
  users: { findRow(id: string): Promise<{ project_id: string; role_id: string; banned: boolean | number } | null> }
  access: { roleById(projectId: string, id: string): Promise<{ name: string } | null> }
}

/** Stateless, signed, short-lived tokens for one record (core-api § Capability tokens). Nothing is stored. */
export function createCapabilityTokensService(deps: CapabilityTokensDeps) {
  /**
   * Checks that the principal holds every grant the capability needs on the collection (forbidden naming
   * the first one missing) and that the record is inside each grant's row scope (record_not_found, the
   * same for a record that does not exist). Throws also unauthorized, collection_not_found.
   */
  async function assertReaches(
    principal: Principal,
    collection: string,
    id: string,
    capability: Capability,
  ): Promise<void> {
    // Every grant first: a missing permission is told without looking at the record at all.
    const opened = []
    for (const action of grantsFor[capability]) opened.push(await deps.open(principal, collection, action))
    for (const scope of opened) {
      if (!(await scope.store.byId(id, scope.scope.rows, false)))
        throw new AppError('record_not_found', 'Record not found')
    }
  }

  return {
    /**
     * Mints a token for the caller's own access to one record. Throws unauthorized (anonymous), forbidden
     * (a missing grant, or a service key, which acts for no person), record_not_found, collection_not_found,
     * invalid_request (an unusable collection name or document id).
     */
    async mint(principal: Principal, input: MintInput): Promise<CapabilityToken> {
      const subject = requirePerson(principal, 'A capability token')
      if (!collectionName.test(input.collection)) {
        throw new AppError(
          'invalid_request',
          'collection must be a collection name (a-z, 0-9, _; up to 50 characters)',
          { field: 'collection' },
        )
      }
      if (!documentId.test(input.documentId))
        throw new AppError('invalid_request', 'documentId must be a record id (1-64 letters, digits, - or _)', {
          field: 'documentId',
        })
      const capability = input.capability ?? 'read'
      if (input.expiresIn !== undefined && !Number.isSafeInteger(input.expiresIn)) {
        throw new AppError('invalid_request', 'expiresIn must be a whole number of seconds', { field: 'expiresIn' })
      }
      await assertReaches(principal, input.collection, input.documentId, capability)

      const expiresIn = Math.min(maxExpiresIn, Math.max(minExpiresIn, input.expiresIn ?? defaultExpiresIn))
      const issuedAt = deps.clock.seconds()
      const claims: CapabilityClaims = {
        project: principal.projectId,
        collection: input.collection,
        id: input.documentId,
        capability,
        subject,
        issuedAt,
        expiresAt: issuedAt + expiresIn,
      }
      return {
        token: encodeToken(deps.secretKey, claims),
        capability,
        document: { collection: claims.collection, id: claims.id, type: 'record' },
        subject,
        issuedAt,
        expiresAt: claims.expiresAt,
        expiresIn,
        maxExpiresIn,
      }
    },

    /** Whether a bearer credential is a capability token (and not a session token or key). */
    isToken: (credential: string): boolean => credential.startsWith(tokenPrefix),

    /**
     * A token at use: signature and expiry, then the subject's current account (gone or banned →
     * unauthorized) and current rights on the record, exactly as at minting (forbidden, record_not_found).
     * A revoked share or a lost grant therefore stops a token on its next use.
     */
    async resolve(token: string): Promise<ResolvedCapability> {
      const claims = decodeToken(deps.secretKey, token, deps.clock.seconds())
      const user = await deps.users.findRow(claims.subject)
      if (!user || user.banned) throw new AppError('unauthorized', 'The capability token no longer works')
      const role = await deps.access.roleById(user.project_id, user.role_id)
      const superAdmin = role?.name === 'super_admin'
      // Only a super_admin acts outside its own project (as with X-Project-Id).
      if (claims.project !== user.project_id && !superAdmin)
        throw new AppError('unauthorized', 'The capability token no longer works')
      const principal = principals.capability({
        homeProjectId: user.project_id,
        projectId: claims.project,
        userId: claims.subject,
        roleId: user.role_id,
        roleName: role?.name ?? 'unknown',
        superAdmin,
      })
      await assertReaches(principal, claims.collection, claims.id, claims.capability)
      return { principal, claims }
    },
  }
}

export type CapabilityTokensService = ReturnType<typeof createCapabilityTokensService>
