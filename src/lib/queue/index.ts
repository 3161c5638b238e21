export type {
  AddOptions,
  Backoff,
  Job,
  JobHandler,
  JobName,
  JobOf,
  JobQueue,
  JobQueueOptions,
  NamedQueue,
  QueueDefinition,
  QueueDepth,
  QueueLog,
  RetryOptions,
  ScheduleInfo,
  ScheduleOptions,
} from './queue.js'
export { checkTimezone, defaultTimezone, parseSchedule, type CronSchedule } from './cron.js'
export { createMemoryQueue } from './memory-queue.js'
export { createRedisQueue, type RedisQueueOptions } from './redis-queue.js'
export { createSqlQueue, type SqlQueueOptions } from './sql-queue.js'
