export { usersRoutes } from './routes.js'
export { email, password, username, displayName, UserSchema, type User } from './schemas.js'
export { createUsersService, normaliseEmail, type NewUser, type UserChange, type UsersService } from './service.js'
export type { UserRow } from './store.js'
