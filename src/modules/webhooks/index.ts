export { deliveryDefaults, type DeliveryOptions } from './deliver.js'
export { createWebhooksModule, type WebhooksModuleDeps } from './module.js'
export { MASK as WEBHOOK_MASK, type Delivery, type Webhook } from './schemas.js'
export { createWebhooksService, type DeliveryTarget, type WebhooksService } from './service.js'
