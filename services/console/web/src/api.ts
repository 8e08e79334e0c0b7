// Every call the console makes to the public API, in one place (see README "Web console"): the
// page holds the API key in memory and session storage and sends it as the X-API-Key header,
// never in a URL. Response shapes follow docs/api.md (generated from the OpenAPI document; here
// only the fields the console shows).

export interface TaskSummary {
  task_id: string;
  query: string;
  status: string;
  mode: string;
  created_at: string;
  completed_at: string | null;
  total_token_usage: {
    total_tokens: number;
    cost_usd: number;
    prompt_tokens?: number;
    completion_tokens?: number;
  } | null;
}

export interface TaskDetail {
  task_id: string;
  status: string;
  query: string;
  session_id: string;
  mode: string;
  result?: string;
  error: string;
  created_at: string;
  updated_at: string;
  model_used?: string;
  provider?: string;
  usage?: { total_tokens: number; input_tokens?: number; output_tokens?: number; estimated_cost?: number };
}

export interface TaskEvent {
  workflow_id: string;
  type: string;
  agent_id: string;
  message: string;
  timestamp: string;
  seq: number;
  stream_id: string;
  data?: Record<string, unknown>;
  [field: string]: unknown;
}

export interface SessionSummary {
  session_id: string;
  user_id: string;
  external_id?: string | null;
  title?: string | null;
  task_count: number;
  tokens_used: number;
  token_budget: number;
  total_cost_usd?: number;
  created_at: string;
  last_activity_at?: string;
}

export interface SessionTurn {
  turn: number;
  task_id: string;
  user_query: string;
  final_output: string;
  timestamp: string;
  events: { type: string; message: string; timestamp: string }[];
  metadata: { tokens_used: number; execution_time_ms: number; agents_involved: string[] };
}

export interface SubmitInput {
  query: string;
  mode?: string;
  session_id?: string;
  context?: Record<string, unknown>;
}

/** A non-2xx answer: the status and the server's `error` message. */
export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

/**
 * A random UUID v4. `crypto.randomUUID` exists only in secure contexts (HTTPS, localhost); a
 * console opened over plain HTTP on another host still has `getRandomValues`.
 */
export function idempotencyKey(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const TASK_STATUS_FILTERS = ["QUEUED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"] as const;
export const MODES = ["simple", "standard", "complex", "supervisor"] as const;

export interface ApiClientOptions {
  /** `/api/v1` (same origin) or an absolute URL. */
  baseUrl: string;
  /** Empty when the server runs without authentication (GATEWAY_SKIP_AUTH=1). */
  apiKey: string;
  fetch?: typeof fetch;
}

export class ApiClient {
  readonly baseUrl: string;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;

  constructor(options: ApiClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#apiKey = options.apiKey;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** Credential headers for any call, streams included. */
  authHeaders(): Record<string, string> {
    return this.#apiKey ? { "X-API-Key": this.#apiKey } : {};
  }

  async #call<T>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ body: T; headers: Headers }> {
    const init: RequestInit = {
      method,
      headers: { Accept: "application/json", ...this.authHeaders(), ...headers },
      cache: "no-store",
    };
    if (body !== undefined) {
      (init.headers as Record<string, string>)["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const res = await this.#fetch(`${this.baseUrl}${path}`, init);
    const text = await res.text();
    let parsed: unknown;
    if (text !== "") {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    if (!res.ok && !(res.status === 409 && path.endsWith("/cancel"))) {
      const message =
        (parsed as { error?: unknown; message?: unknown } | undefined)?.error ??
        (parsed as { message?: unknown } | undefined)?.message;
      throw new ApiError(res.status, typeof message === "string" ? message : `HTTP ${res.status}`);
    }
    return { body: parsed as T, headers: res.headers };
  }

  /** Checks the key (any authenticated read): resolves when the server accepts it. */
  async verify(): Promise<void> {
    await this.#call("GET", "/tasks?limit=1");
  }

  async listTasks(q: {
    limit: number;
    offset: number;
    status?: string;
    session_id?: string;
  }): Promise<{ tasks: TaskSummary[]; total_count: number }> {
    const params = new URLSearchParams({ limit: String(q.limit), offset: String(q.offset) });
    if (q.status) params.set("status", q.status);
    if (q.session_id) params.set("session_id", q.session_id);
    return (await this.#call<{ tasks: TaskSummary[]; total_count: number }>("GET", `/tasks?${params.toString()}`)).body;
  }

  async submitTask(input: SubmitInput): Promise<{ task_id: string; session_id: string | null }> {
    // One key per submission: a retried click or a replayed request creates the task once.
    const res = await this.#call<{ task_id: string }>("POST", "/tasks", input, { "Idempotency-Key": idempotencyKey() });
    return { task_id: res.body.task_id, session_id: res.headers.get("X-Session-ID") };
  }

  async getTask(id: string): Promise<TaskDetail> {
    return (await this.#call<TaskDetail>("GET", `/tasks/${encodeURIComponent(id)}`)).body;
  }

  async cancelTask(id: string, reason?: string): Promise<{ success: boolean; message: string; status?: string }> {
    return (
      await this.#call<{ success: boolean; message: string; status?: string }>(
        "POST",
        `/tasks/${encodeURIComponent(id)}/cancel`,
        reason ? { reason } : {},
      )
    ).body;
  }

  async decideApproval(input: {
    workflow_id: string;
    approval_id: string;
    approved: boolean;
    feedback?: string;
  }): Promise<{ success: boolean; message: string }> {
    return (await this.#call<{ success: boolean; message: string }>("POST", "/approvals/decision", input)).body;
  }

  async listSessions(q: {
    limit: number;
    offset: number;
  }): Promise<{ sessions: SessionSummary[]; total_count: number }> {
    const params = new URLSearchParams({ limit: String(q.limit), offset: String(q.offset) });
    return (
      await this.#call<{ sessions: SessionSummary[]; total_count: number }>("GET", `/sessions?${params.toString()}`)
    ).body;
  }

  async getSession(id: string): Promise<SessionSummary & { tokens_remaining?: number }> {
    return (await this.#call<SessionSummary>("GET", `/sessions/${encodeURIComponent(id)}`)).body;
  }

  async sessionTurns(
    id: string,
    q: { limit: number; offset: number },
  ): Promise<{ session_id: string; count: number; turns: SessionTurn[] }> {
    const params = new URLSearchParams({ limit: String(q.limit), offset: String(q.offset) });
    return (
      await this.#call<{ session_id: string; count: number; turns: SessionTurn[] }>(
        "GET",
        `/sessions/${encodeURIComponent(id)}/events?${params.toString()}`,
      )
    ).body;
  }

  async renameSession(id: string, title: string): Promise<{ title: string }> {
    return (await this.#call<{ title: string }>("PATCH", `/sessions/${encodeURIComponent(id)}`, { title })).body;
  }

  async deleteSession(id: string): Promise<void> {
    await this.#call("DELETE", `/sessions/${encodeURIComponent(id)}`);
  }
}
