import { z } from "zod";
import type { RouteModule } from "./app.ts";

// The contract leaves bearer-token issuance open. Besides the keys CLI, a backend that holds an
// API key can mint a short-lived token for a browser's stream connection here, so the key itself
// never reaches the browser.

const MIN_TTL = 60;
const MAX_TTL = 86_400;

const TokenRequest = z
  .object({
    ttl_seconds: z
      .number()
      .int()
      .min(MIN_TTL)
      .max(MAX_TTL)
      .optional()
      .openapi({ description: `Token lifetime, ${MIN_TTL}–${MAX_TTL} s; default AUTH_TOKEN_TTL_SECONDS.` }),
  })
  .strict()
  .openapi("AccessTokenRequest");

const TokenResponse = z
  .object({
    access_token: z.string().openapi({ description: "HS256 JWT; send as `Authorization: Bearer <access_token>`." }),
    token_type: z.literal("Bearer"),
    expires_in: z.number().int(),
    expires_at: z.string().openapi({ format: "date-time" }),
  })
  .openapi("AccessToken");

export const tokenRoutes: RouteModule = ({ router, docs, auth, limits, idempotency, tokens }) => {
  docs.route(
    router,
    {
      method: "post",
      path: "/api/v1/auth/token",
      summary: "Exchange an API key for a short-lived bearer access token",
      description:
        "Only an `X-API-Key` is accepted here (a token cannot mint tokens). The token carries the key owner's user id in `sub`.",
      tags: ["Auth"],
      operationId: "createAccessToken",
      auth: "apiKey",
      rateLimited: true,
      idempotent: true,
      body: TokenRequest.optional(),
      middleware: [auth.require({ allowBearer: false }), limits.middleware(), idempotency],
      responses: { 201: { description: "A new access token.", schema: TokenResponse } },
    },
    async (req, res, { body }) => {
      const ttl = body?.ttl_seconds;
      const issued = await tokens.issue(req.principal!.userId, ttl);
      res.status(201).json({
        access_token: issued.token,
        token_type: "Bearer",
        expires_in: Math.round((issued.expiresAt.getTime() - Date.now()) / 1000),
        expires_at: issued.expiresAt.toISOString(),
      } satisfies z.input<typeof TokenResponse>);
    },
  );
};
