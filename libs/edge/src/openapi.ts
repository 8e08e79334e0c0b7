import type { Request, RequestHandler, Response, Router } from "express";
import { z } from "zod";
import {
  extendZodWithOpenApi,
  OpenAPIRegistry,
  OpenApiGeneratorV3,
  type ResponseConfig,
  type RouteConfig,
} from "@asteasolutions/zod-to-openapi";
import { ValidationError } from "@tog/core";

// One source of truth per route: a service declares a route once with `ApiDocs.route`, which
// (1) registers its request/response zod schemas in the OpenAPI registry and (2) mounts the
// handler behind validation by those SAME schemas. GET /openapi.json serves the generated
// OpenAPI 3.0 document, built once and cached.

extendZodWithOpenApi(z);

export const OPENAPI_VERSION = "3.0.3";

export const SECURITY_SCHEME_API_KEY = "ApiKeyAuth";
export const SECURITY_SCHEME_BEARER = "bearerAuth";

/** Who may call a route: nobody needs a credential, an API key, or an API key or bearer token. */
export type RouteAuth = "none" | "apiKey" | "apiKeyOrBearer";

const SECURITY: Record<RouteAuth, Record<string, string[]>[]> = {
  none: [],
  apiKey: [{ [SECURITY_SCHEME_API_KEY]: [] }],
  apiKeyOrBearer: [{ [SECURITY_SCHEME_API_KEY]: [] }, { [SECURITY_SCHEME_BEARER]: [] }],
};

/** The one error body of the API (docs/api.md "Errors"). */
export const ErrorResponseSchema = z
  .object({
    error: z.string().openapi({ example: "Unauthorized" }),
    retry_after: z.number().int().optional().openapi({ description: "Seconds to wait; only on 429." }),
  })
  .openapi("Error");

export const RATE_LIMIT_HEADERS = {
  "X-RateLimit-Limit": { description: "Requests allowed per window.", schema: { type: "integer" as const } },
  "X-RateLimit-Remaining": {
    description:
      "Requests left in the current window. Exact with one instance; with several, requests other instances have reserved count as used, so it is never more than the shared counter allows.",
    schema: { type: "integer" as const },
  },
  "X-RateLimit-Reset": {
    description: "Unix time (seconds) when the window resets.",
    schema: { type: "integer" as const },
  },
};
const RETRY_AFTER_HEADER = { description: "Seconds to wait before retrying.", schema: { type: "integer" as const } };

/** Response headers of a replayed idempotent request (docs/api.md "Idempotency"). */
export const IDEMPOTENCY_REPLAY_HEADERS = {
  "X-Idempotency-Cached": {
    description: "`true` when this answer is the replay of an earlier request with the same Idempotency-Key.",
    schema: { type: "string" as const },
  },
  "X-Idempotency-Key": {
    description: "The Idempotency-Key of the replayed request (only on replays).",
    schema: { type: "string" as const },
  },
};

/** W3C trace context, read on every request (docs/api.md "Requests"). */
const TRACE_CONTEXT_HEADERS = {
  traceparent: z.string().optional().openapi({
    description:
      "W3C trace context `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`; continued by the server span.",
    example: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
  }),
  tracestate: z
    .string()
    .optional()
    .openapi({ description: "W3C tracestate: comma-separated vendor key=value pairs, passed on with traceparent." }),
};

type HttpMethod = "get" | "post" | "put" | "patch" | "delete";
type AnyObject = z.ZodType<Record<string, unknown>>;

export interface RouteResponse {
  description: string;
  /** Omitted for empty responses (204). */
  schema?: z.ZodType;
  /** A schema registered as a component by name (e.g. raw JSON Schema); used instead of `schema`. */
  schemaRef?: string;
  /** Default `application/json`. */
  contentType?: string;
  /** Response headers this route sets (beyond the rate-limit ones). */
  headers?: Record<string, { description: string; schema?: { type: "string" | "integer" | "boolean" } }>;
}

export type RequestPart = "params" | "query" | "body" | "headers";

export interface RouteSpec<
  P extends AnyObject | undefined,
  Q extends AnyObject | undefined,
  B extends z.ZodType | undefined,
> {
  method: HttpMethod;
  /** OpenAPI form, e.g. `/api/v1/tasks/{id}`; mounted as `/api/v1/tasks/:id`. */
  path: string;
  summary: string;
  description?: string;
  tags?: string[];
  operationId?: string;
  deprecated?: boolean;
  auth: RouteAuth;
  /** Documents the X-RateLimit-* headers and the 429 answer. */
  rateLimited?: boolean;
  /** Documents the Idempotency-Key request header and the replay headers. */
  idempotent?: boolean;
  /** Request headers this route reads (beyond the credential, Idempotency-Key and trace context). */
  headers?: z.ZodObject;
  params?: P;
  query?: Q;
  body?: B;
  responses: Record<number, RouteResponse>;
  /** Runs before validation, in order (auth first, so an anonymous caller gets 401, not 400). */
  middleware?: RequestHandler[];
  /** Error text for invalid input; default: `Invalid request body: <detail>` / `Invalid <name> parameter`. */
  invalidMessage?: (part: RequestPart, error: z.ZodError) => string;
}

/**
 * A route as the public document describes it: everything of a RouteSpec but the middleware,
 * which belongs to the process that serves it. Defined once (libs/api), described in the
 * document and mounted by the owning service with `mountRoute` or `ApiDocs.route`.
 */
export type RouteDefinition<
  P extends AnyObject | undefined,
  Q extends AnyObject | undefined,
  B extends z.ZodType | undefined,
> = Omit<RouteSpec<P, Q, B>, "middleware">;

/** Keeps the schemas' types of a route definition, so handlers mounted from it are typed. */
export function defineRoute<
  P extends AnyObject | undefined = undefined,
  Q extends AnyObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(definition: RouteDefinition<P, Q, B>): RouteDefinition<P, Q, B> {
  return definition;
}

/** Mounts `handler` behind validation by the spec's schemas, without describing it anywhere. */
export function mountRoute<
  P extends AnyObject | undefined = undefined,
  Q extends AnyObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(router: Router, spec: RouteSpec<P, Q, B>, handler: RouteHandler<P, Q, B>): void {
  const validate = createValidator(spec);
  const run: RequestHandler = async (req, res) => {
    await handler(req, res, validate(req));
  };
  router[spec.method](toExpressPath(spec.path), ...(spec.middleware ?? []), run);
}

/** An error answer in the OpenAPI document: the one `{"error": "..."}` body. */
export function errorResponse(description: string): RouteResponse {
  return { description, schema: ErrorResponseSchema };
}

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteInput<P, Q, B> {
  params: Out<P>;
  query: Out<Q>;
  body: Out<B>;
}

export type RouteHandler<P, Q, B> = (req: Request, res: Response, input: RouteInput<P, Q, B>) => unknown;

export interface ApiDocsOptions {
  title: string;
  version: string;
  description?: string;
  servers?: { url: string; description?: string }[];
  /** Top-level tags with descriptions; every tag an operation uses must be listed. */
  tags?: { name: string; description: string }[];
  license?: { name: string; url?: string };
  /** Registries of other modules whose routes belong in the same document. */
  include?: OpenAPIRegistry[];
}

export type OpenApiDocument = ReturnType<OpenApiGeneratorV3["generateDocument"]>;

export class ApiDocs {
  readonly registry: OpenAPIRegistry;
  private readonly options: ApiDocsOptions;
  private cached: string | undefined;

  constructor(options: ApiDocsOptions) {
    this.options = options;
    this.registry = new OpenAPIRegistry(options.include);
    this.registry.registerComponent("securitySchemes", SECURITY_SCHEME_API_KEY, {
      type: "apiKey",
      in: "header",
      name: "X-API-Key",
      description: "API key: `sk_` followed by 64 hex characters. Never in the query string.",
    });
    this.registry.registerComponent("securitySchemes", SECURITY_SCHEME_BEARER, {
      type: "http",
      scheme: "bearer",
      bearerFormat: "JWT",
      description:
        "Streaming routes only. An access token (HS256 JWT from `npm run keys -- token`) or an API key (`sk_…`).",
    });
    this.registry.register("Error", ErrorResponseSchema);
    for (const [name, header] of Object.entries(RATE_LIMIT_HEADERS))
      this.registry.registerComponent("headers", name, header);
    this.registry.registerComponent("headers", "Retry-After", RETRY_AFTER_HEADER);
    for (const [name, header] of Object.entries(IDEMPOTENCY_REPLAY_HEADERS))
      this.registry.registerComponent("headers", name, header);
  }

  /** Registers a route in the document and mounts `handler` behind validation by the same schemas. */
  route<
    P extends AnyObject | undefined = undefined,
    Q extends AnyObject | undefined = undefined,
    B extends z.ZodType | undefined = undefined,
  >(router: Router, spec: RouteSpec<P, Q, B>, handler: RouteHandler<P, Q, B>): void {
    this.describe(spec);
    mountRoute(router, spec, handler);
  }

  /** Registers a route in the document only: for a document that lists routes other processes serve. */
  describe(spec: RouteDefinition<AnyObject | undefined, AnyObject | undefined, z.ZodType | undefined>): void {
    this.registry.registerPath(toRouteConfig(spec));
    this.cached = undefined;
  }

  /** The OpenAPI 3.0 document of every route registered so far. */
  document(): OpenApiDocument {
    return JSON.parse(this.json()) as OpenApiDocument;
  }

  json(): string {
    this.cached ??= JSON.stringify(
      untypedNullable(
        new OpenApiGeneratorV3(this.registry.definitions).generateDocument({
          openapi: OPENAPI_VERSION,
          info: {
            title: this.options.title,
            version: this.options.version,
            ...(this.options.description === undefined ? {} : { description: this.options.description }),
            ...(this.options.license ? { license: this.options.license } : {}),
          },
          ...(this.options.servers ? { servers: this.options.servers } : {}),
          ...(this.options.tags ? { tags: this.options.tags } : {}),
        }),
      ),
    );
    return this.cached;
  }

  /** Handler for GET /openapi.json. */
  handler(): (req: Request, res: Response) => void {
    return (_req, res) => {
      res.type("application/json").send(this.json());
    };
  }
}

/**
 * `z.unknown()` is generated as `{nullable: true}` without a `type`, which OpenAPI 3.0 does not
 * allow (Redocly: nullable-type-sibling). A schema without `type` already admits null, so the
 * flag is dropped there.
 */
function untypedNullable<T>(value: T): T {
  if (Array.isArray(value)) {
    for (const v of value) untypedNullable(v);
  } else if (typeof value === "object" && value !== null) {
    const o = value as Record<string, unknown>;
    if (o.nullable === true && o.type === undefined) delete o.nullable;
    for (const v of Object.values(o)) untypedNullable(v);
  }
  return value;
}

/** `/tasks/{id}` → `/tasks/:id`. */
export function toExpressPath(openApiPath: string): string {
  return openApiPath.replace(/\{([A-Za-z0-9_]+)\}/g, ":$1");
}

function jsonOf(r: RouteResponse) {
  const type = r.contentType ?? "application/json";
  if (r.schemaRef !== undefined) return { [type]: { schema: { $ref: `#/components/schemas/${r.schemaRef}` } } };
  return r.schema === undefined ? undefined : { [type]: { schema: r.schema } };
}

const errorResponseConfig = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorResponseSchema } },
});

function toRouteConfig(
  spec: RouteDefinition<AnyObject | undefined, AnyObject | undefined, z.ZodType | undefined>,
): RouteConfig {
  const rateHeaders = spec.rateLimited
    ? Object.fromEntries(Object.keys(RATE_LIMIT_HEADERS).map((h) => [h, { $ref: `#/components/headers/${h}` }]))
    : {};
  const responses: RouteConfig["responses"] = {};
  const replayHeaders = spec.idempotent
    ? Object.fromEntries(Object.keys(IDEMPOTENCY_REPLAY_HEADERS).map((h) => [h, { $ref: `#/components/headers/${h}` }]))
    : {};
  for (const [status, r] of Object.entries(spec.responses)) {
    const content = jsonOf(r);
    const headers = { ...rateHeaders, ...(status.startsWith("2") ? replayHeaders : {}), ...r.headers };
    responses[status] = {
      description: r.description,
      ...(content ? { content } : {}),
      ...(Object.keys(headers).length > 0 ? { headers: headers as ResponseConfig["headers"] } : {}),
    };
  }
  type Headers = NonNullable<RouteResponse["headers"]> | Record<string, { $ref: string }>;
  const withHeaders = (r: ReturnType<typeof errorResponseConfig>, extra: Headers = {}): ResponseConfig => {
    const headers = { ...rateHeaders, ...extra };
    return Object.keys(headers).length > 0 ? { ...r, headers: headers as ResponseConfig["headers"] } : r;
  };
  const hasInput = spec.params !== undefined || spec.query !== undefined || spec.body !== undefined;
  if (hasInput) responses["400"] ??= withHeaders(errorResponseConfig("Invalid request."));
  if (spec.auth !== "none") responses["401"] ??= errorResponseConfig("Missing or invalid credential.");
  if (spec.rateLimited) {
    responses["429"] ??= withHeaders(errorResponseConfig("Rate limit exceeded."), {
      "Retry-After": { $ref: "#/components/headers/Retry-After" },
    });
  }
  const request: NonNullable<RouteConfig["request"]> = {};
  if (spec.params) request.params = spec.params as unknown as z.ZodObject;
  if (spec.query) request.query = spec.query as unknown as z.ZodObject;
  if (spec.body)
    request.body = { required: !spec.body.isOptional(), content: { "application/json": { schema: spec.body } } };
  request.headers = z.object({
    ...(spec.idempotent
      ? {
          "Idempotency-Key": z.string().optional().openapi({
            description: "Replays the first 2xx answer for 24 h; replays carry X-Idempotency-Cached: true.",
          }),
        }
      : {}),
    ...spec.headers?.shape,
    ...TRACE_CONTEXT_HEADERS,
  });
  return {
    method: spec.method,
    path: spec.path,
    summary: spec.summary,
    ...(spec.description === undefined ? {} : { description: spec.description }),
    ...(spec.tags ? { tags: spec.tags } : {}),
    ...(spec.operationId ? { operationId: spec.operationId } : {}),
    ...(spec.deprecated ? { deprecated: true } : {}),
    security: SECURITY[spec.auth],
    ...(Object.keys(request).length > 0 ? { request } : {}),
    responses,
  };
}

/** Default error text for invalid input (docs/api.md "Requests"). */
export function defaultInvalidMessage(part: RequestPart, error: z.ZodError): string {
  const issue = error.issues[0];
  if (part === "body") {
    const detail = error.issues
      .slice(0, 5)
      .map((i) => (i.path.length > 0 ? `${i.path.join(".")}: ${i.message}` : i.message))
      .join("; ");
    return `Invalid request body: ${detail}`;
  }
  const name = issue?.path[0];
  return name === undefined ? `Invalid ${part}` : `Invalid ${String(name)} parameter`;
}

/** Parses a request part with its schema; a ValidationError (400) when it does not fit. */
export function parseRequestPart<S extends z.ZodType>(
  part: RequestPart,
  schema: S,
  value: unknown,
  invalidMessage: (part: RequestPart, error: z.ZodError) => string = defaultInvalidMessage,
): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new ValidationError(invalidMessage(part, result.error));
  return result.data;
}

/**
 * The text of the first failed rule, for schemas that word every rule as the complete client
 * message. A rule without its own text (zod's default wording starts with "Invalid input")
 * falls back to the generic form.
 */
export function firstRuleMessage(part: RequestPart, error: z.ZodError): string {
  const message = error.issues[0]?.message;
  if (message === undefined || message.startsWith("Invalid input")) return defaultInvalidMessage(part, error);
  return message;
}

function createValidator<
  P extends AnyObject | undefined,
  Q extends AnyObject | undefined,
  B extends z.ZodType | undefined,
>(spec: RouteSpec<P, Q, B>): (req: Request) => RouteInput<P, Q, B> {
  const msg = spec.invalidMessage ?? defaultInvalidMessage;
  return (req) =>
    ({
      params: spec.params ? parseRequestPart("params", spec.params, req.params, msg) : undefined,
      query: spec.query ? parseRequestPart("query", spec.query, req.query, msg) : undefined,
      // No JSON body (no Content-Type) reads as `{}`, so "field is required" rules speak.
      body: spec.body ? parseRequestPart("body", spec.body, req.body ?? {}, msg) : undefined,
    }) as RouteInput<P, Q, B>;
}
