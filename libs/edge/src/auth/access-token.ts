import { randomUUID } from "node:crypto";
import { SignJWT, jwtVerify } from "jose";
import { ConfigError, isUuid } from "@tog/core";

// Bearer access tokens: compact JWS, HS256, signed with AUTH_TOKEN_SECRET.
//   header  {"alg":"HS256","typ":"JWT"}
//   claims  {"sub":"<user uuid>","iat":<s>,"exp":<s>,"iss":"tog-gateway","aud":"tog-api","jti":"<uuid>"}
// Issued by `npm run keys -- token`; stateless, so one cannot be revoked before `exp` (rotate the
// secret to revoke all: docs/security.md).

export const ACCESS_TOKEN_ISSUER = "tog-gateway";
export const ACCESS_TOKEN_AUDIENCE = "tog-api";
const ALGORITHM = "HS256";

export interface AccessTokensOptions {
  /** Signs and verifies; undefined: no token is issued or accepted (auth.config.ts). */
  secret: string | undefined;
  /** Rotation: still verifies tokens signed before the current secret took over; never signs. */
  previousSecret?: string | undefined;
  /** Lifetime of issued tokens unless `issue` is given another. */
  ttlSeconds: number;
  /** Tolerated clock difference when checking `exp`/`iat`. */
  clockToleranceSeconds?: number;
}

export interface IssuedToken {
  token: string;
  expiresAt: Date;
  /** The token's lifetime as issued (exp − iat), the `expires_in` of the response. */
  lifetimeSeconds: number;
}

export class AccessTokens {
  private readonly key: Uint8Array | undefined;
  private readonly previousKey: Uint8Array | undefined;
  private readonly ttlSeconds: number;
  private readonly clockToleranceSeconds: number;

  constructor(options: AccessTokensOptions) {
    this.key = options.secret === undefined ? undefined : new TextEncoder().encode(options.secret);
    this.previousKey =
      options.previousSecret === undefined ? undefined : new TextEncoder().encode(options.previousSecret);
    this.ttlSeconds = options.ttlSeconds;
    this.clockToleranceSeconds = options.clockToleranceSeconds ?? 5;
  }

  /** Whether tokens can be issued and verified at all (a secret is configured). */
  get enabled(): boolean {
    return this.key !== undefined;
  }

  async issue(userId: string, ttlSeconds = this.ttlSeconds): Promise<IssuedToken> {
    if (this.key === undefined) throw new ConfigError("AUTH_TOKEN_SECRET is not set: no access token can be issued");
    const iat = Math.floor(Date.now() / 1000);
    const exp = iat + ttlSeconds;
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: ALGORITHM, typ: "JWT" })
      .setSubject(userId)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .setIssuer(ACCESS_TOKEN_ISSUER)
      .setAudience(ACCESS_TOKEN_AUDIENCE)
      .setJti(randomUUID())
      .sign(this.key);
    return { token, expiresAt: new Date(exp * 1000), lifetimeSeconds: ttlSeconds };
  }

  /** The user id of a valid token; undefined for anything else (bad signature, expired, wrong iss/aud, no exp). */
  async verify(token: string): Promise<{ userId: string } | undefined> {
    if (this.key === undefined) return undefined;
    const current = await this.verifyWith(token, this.key);
    if (current !== undefined || this.previousKey === undefined) return current;
    return this.verifyWith(token, this.previousKey);
  }

  private async verifyWith(token: string, key: Uint8Array): Promise<{ userId: string } | undefined> {
    try {
      const { payload } = await jwtVerify(token, key, {
        algorithms: [ALGORITHM],
        issuer: ACCESS_TOKEN_ISSUER,
        audience: ACCESS_TOKEN_AUDIENCE,
        requiredClaims: ["exp", "iat", "sub"],
        clockTolerance: this.clockToleranceSeconds,
      });
      if (typeof payload.sub !== "string" || !isUuid(payload.sub)) return undefined;
      return { userId: payload.sub.toLowerCase() };
    } catch {
      return undefined;
    }
  }
}
