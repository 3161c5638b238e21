export { createEmailModule } from './module.js'
export { EmailError, isEmailError, transportFailure, type EmailErrorCode } from './errors.js'
export { receiptSignature, receiptSignatureHeader, receiptTimestampHeader, receiptWindowSeconds } from './receipts.js'
export {
  createEmailService,
  type EmailDeps,
  type EmailService,
  type LoggedMessage,
  type OutgoingEmail,
  type SendContext,
  type SentEmail,
} from './service.js'
