// The baselines of the task bench, as one bare express process (its own process, like the
// gateway it is compared with):
//   POST /items              one PostgreSQL INSERT (the "machine's limit" of issue 10)
//   GET  /api/v1/health      the gateway's liveness body, nothing else
//   POST /api/v1/auth/token  the gateway's token route without its stack: JSON body parsing and
//                            the same AccessTokens.issue (HS256 JWT), no auth, rate limit,
//                            idempotency, logging, tracing or metrics
// Env: PORT, DATABASE_URL, DATABASE_POOL_MAX (16), AUTH_TOKEN_SECRET.
import { randomBytes, randomUUID } from "node:crypto";
import express from "express";
import pg from "pg";
import { AccessTokens } from "@tog/edge";

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DATABASE_POOL_MAX ?? 16),
});
pool.on("error", () => undefined);
await pool.query(
  "CREATE TABLE IF NOT EXISTS items (id uuid PRIMARY KEY, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())",
);
const tokens = new AccessTokens({
  secret: process.env.AUTH_TOKEN_SECRET ?? randomBytes(32).toString("hex"),
  ttlSeconds: 3600,
});
const userId = randomUUID();

const app = express();
app.use(express.json());
app.post("/items", async (req, res) => {
  const id = randomUUID();
  await pool.query("INSERT INTO items (id, body) VALUES ($1, $2)", [id, req.body]);
  res.json({ id });
});
app.get("/api/v1/health", (_req, res) => {
  res.json({ status: "healthy", version: "bench", time: new Date().toISOString() });
});
app.post("/api/v1/auth/token", async (_req, res) => {
  const issued = await tokens.issue(userId);
  res.status(201).json({
    access_token: issued.token,
    token_type: "Bearer",
    expires_in: Math.round((issued.expiresAt.getTime() - Date.now()) / 1000),
    expires_at: issued.expiresAt.toISOString(),
  });
});
const server = app.listen(Number(process.env.PORT ?? 0), "127.0.0.1");
const shutdown = () => {
  server.close();
  void pool.end().finally(() => process.exit(0));
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
