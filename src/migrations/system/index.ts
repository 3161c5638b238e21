import type { Migration } from '../../lib/db/index.js'
import { m0001Projects } from './0001-projects.js'
import { m0002Identity } from './0002-identity.js'
import { m0003UsersEmailTrusted } from './0003-users-email-trusted.js'
import { m0004Collections } from './0004-collections.js'

/** System database migrations, in order. Append only; never edit one that has shipped. */
export const systemMigrations: readonly Migration[] = [m0001Projects, m0002Identity, m0003UsersEmailTrusted, m0004Collections]
