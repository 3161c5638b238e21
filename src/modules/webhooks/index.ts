export { deliveryDefaults, type DeliveryOptions } from './deliver.js'
export { createWebhooksModule, type WebhooksModuleDeps } from './module.js'
export { MASK as WEBHOOK_MASK, type Delivery, type Webhook } from './schemas.js'
export { createWebhooksService, type DeliveryTarget, type WebhooksService } from './service.js'
export { webhookCreateShape } from './create-shape.js'
/** The create and update bodies as their routes take them (blueprint bricks are parsed by the same schemas). */
export { CreateWebhookSchema, UpdateWebhookSchema } from './schemas.js'
