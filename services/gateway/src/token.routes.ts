import type { z } from "zod";
import { mountRoute } from "@tog/edge";
import { createAccessTokenRoute, type AccessTokenSchema } from "@tog/api";
import type { RouteModule } from "./app.ts";

// POST /api/v1/auth/token, as libs/api defines it (docs/api.md "Auth").

export const tokenRoutes: RouteModule = ({ router, auth, limits, idempotency, tokens }) => {
  mountRoute(
    router,
    { ...createAccessTokenRoute, middleware: [auth.require({ allowBearer: false }), limits.middleware(), idempotency] },
    async (req, res, { body }) => {
      const ttl = body?.ttl_seconds;
      const issued = await tokens.issue(req.principal!.userId, ttl);
      res.status(201).json({
        access_token: issued.token,
        token_type: "Bearer",
        // The lifetime as issued, not recomputed from the clock (which could say one second less).
        expires_in: issued.lifetimeSeconds,
        expires_at: issued.expiresAt.toISOString(),
      } satisfies z.input<typeof AccessTokenSchema>);
    },
  );
};
