import { z } from "zod";
import { defineRoute } from "@tog/edge";

// Bearer-token issuance (docs/api.md "Auth"). Besides the keys CLI, a backend that holds an API
// key can mint a short-lived token for a browser's stream connection here, so the key itself
// never reaches the browser.

export const TOKEN_MIN_TTL_SECONDS = 60;
export const TOKEN_MAX_TTL_SECONDS = 86_400;

export const AccessTokenRequestSchema = z
  .object({
    ttl_seconds: z
      .number()
      .int()
      .min(TOKEN_MIN_TTL_SECONDS)
      .max(TOKEN_MAX_TTL_SECONDS)
      .optional()
      .openapi({
        description: `Token lifetime, ${TOKEN_MIN_TTL_SECONDS}–${TOKEN_MAX_TTL_SECONDS} s; default AUTH_TOKEN_TTL_SECONDS.`,
      }),
  })
  .strict()
  .openapi("AccessTokenRequest");

export const AccessTokenSchema = z
  .object({
    access_token: z.string().openapi({ description: "HS256 JWT; send as `Authorization: Bearer <access_token>`." }),
    token_type: z.literal("Bearer"),
    expires_in: z.number().int(),
    expires_at: z.string().openapi({ format: "date-time" }),
  })
  .openapi("AccessToken");

export const createAccessTokenRoute = defineRoute({
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
  body: AccessTokenRequestSchema.optional(),
  responses: { 201: { description: "A new access token.", schema: AccessTokenSchema } },
});
