export type { RateLimiter, RateLimitResult } from './rate-limiter.js'
export {
  createMemoryRateLimiter,
  type MemoryRateLimiter,
  type MemoryRateLimiterOptions,
} from './memory-rate-limiter.js'
export { createRedisRateLimiter, type RedisRateLimiterOptions } from './redis-rate-limiter.js'
