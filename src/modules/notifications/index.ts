export { createNotificationsModule } from './module.js'
export type { InboxChannel, InboxListener } from './live.js'
export {
  notificationBounds,
  notificationTypes,
  type InboxMessage,
  type Notification,
  type NotificationType,
  type SendInput,
} from './schemas.js'
export type { NotificationsService } from './service.js'
