// The limit stores and what goes with them, as the rest of the platform imports them.
export { DAILY_SLACK_MS, nextUtcMidnightMs, utcDay } from "./daily.js";
export { durationText, type RateLimitHeaderFormat, rateLimitHeaders, resetTime, retryAfterSeconds } from "./headers.js";
export { MemoryLimitStore } from "./memory-store.js";
export { DEFAULT_LIMIT_KEY_PREFIX, RedisLimitStore, type RedisLimitStoreOptions } from "./redis-store.js";
