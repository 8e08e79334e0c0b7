export { createRedis, pingRedis, redisConfigShape, type Redis, type RedisOptions } from "./client.ts";
