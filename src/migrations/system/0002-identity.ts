import type { Migration } from '../../lib/db/index.js'

/** Roles and grants (access), users, sessions, one-time tokens and OAuth links (auth), API keys, settings, audit log. */
export const m0002Identity: Migration = {
  name: '0002-identity',
  async up(db) {
    await db.schema
      .createTable('roles')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('admin_access', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('built_in', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('roles_project_name', ['project_id', 'name'])
      .execute()

    await db.schema
      .createTable('grants')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('role_id', 'text', (c) => c.notNull().references('roles.id').onDelete('cascade'))
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('resource', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('item_filter', 'text')
      .addColumn('fields', 'text')
      .execute()
    await db.schema.createIndex('grants_role').on('grants').column('role_id').execute()

    await db.schema
      .createTable('users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('role_id', 'text', (c) => c.notNull().references('roles.id'))
      .addColumn('email', 'text')
      .addColumn('username', 'text', (c) => c.unique())
      .addColumn('name', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('password_hash', 'text')
      .addColumn('banned', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('totp_secret', 'text')
      .addColumn('totp_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('last_sign_in_at', 'bigint')
      .execute()
    await db.schema.createIndex('users_email').on('users').column('email').execute()
    await db.schema.createIndex('users_project').on('users').columns(['project_id', 'created_at']).execute()

    await db.schema
      .createTable('sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute()

    await db.schema
      .createTable('auth_tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
      .addColumn('data', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute()

    await db.schema
      .createTable('oauth_accounts')
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('provider_user_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('oauth_accounts_pk', ['provider', 'provider_user_id'])
      .execute()

    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
      .addColumn('label', 'text', (c) => c.notNull())
      .addColumn('capabilities', 'text', (c) => c.notNull())
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      .addColumn('last_used_at', 'bigint')
      .execute()
    await db.schema.createIndex('api_keys_project').on('api_keys').columns(['project_id', 'created_at']).execute()

    await db.schema
      .createTable('settings')
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('settings_pk', ['project_id', 'key'])
      .execute()

    await db.schema
      .createTable('audit_log')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('actor_type', 'text', (c) => c.notNull())
      .addColumn('actor_id', 'text')
      .addColumn('target_type', 'text')
      .addColumn('target_id', 'text')
      .addColumn('ip', 'text')
      .addColumn('details', 'text', (c) => c.notNull().defaultTo('{}'))
      .execute()
    await db.schema.createIndex('audit_log_project').on('audit_log').columns(['project_id', 'at', 'seq']).execute()
  },
}
