export { deriveKey } from './derive-key.js'
export {
  burnPasswordCheck,
  hashPassword,
  recommendedIterations,
  verifyPassword,
  type PasswordCheck,
} from './password.js'
export { createSecretBox, type SecretBox } from './secret-box.js'
export { sign, verify } from './signing.js'
export { randomToken, safeEqual, sha256Hex } from './tokens.js'
export {
  signatureHeader,
  timestampHeader,
  verifyWebhookSignature,
  webhookSignature,
  webhookSignatureHeaders,
} from './webhook-signature.js'
