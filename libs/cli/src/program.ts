import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import {
  TogClient,
  type EventType,
  type SessionSummary,
  type SessionTurn,
  type StoredEvent,
  type TaskSummary,
  type StreamTransport,
  type TaskStatusFilter,
  type TaskSubmission,
} from "@tog/sdk";
import { resolveConfig } from "./config.ts";
import { parseContextPairs } from "./context-pairs.ts";
import { EXIT, exitCodeOf } from "./exit-codes.ts";
import { follow } from "./follow.ts";
import { createOutput, print, table, type Output } from "./output.ts";

// The `tog` command line (commander). Every command prints readable text, or JSON with --json,
// and exits with a code from exit-codes.ts.

interface GlobalFlags {
  baseUrl?: string;
  apiKey?: string;
  config?: string;
  json?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];
const positiveInt = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("expected a non-negative integer");
  return n;
};
const short = (s: string | null | undefined, n = 60) => (s == null ? "" : s.length > n ? `${s.slice(0, n - 1)}…` : s);
const bare = (status: string) => status.replace(/^TASK_STATUS_|^EXECUTION_MODE_/, "");

export function buildProgram(run: { exitCode: number }): Command {
  const program = new Command();
  program
    .name("tog")
    .description("Command-line client of the Task Orchestration Gateway")
    .option("--base-url <url>", "server URL (env TOG_BASE_URL; default http://localhost:8080)")
    .option("--api-key <key>", "API key (env TOG_API_KEY)")
    .option("--config <file>", "config file (env TOG_CONFIG; default ~/.config/tog/config.json)")
    .option("--json", "machine-readable JSON output")
    .showHelpAfterError()
    .exitOverride();

  const ctx = (cmd: Command): { client: TogClient; out: Output } => {
    const flags = cmd.optsWithGlobals<GlobalFlags>();
    const config = resolveConfig(flags);
    return {
      client: new TogClient({ baseUrl: config.baseUrl, apiKey: config.apiKey }),
      out: createOutput(flags.json === true),
    };
  };

  program
    .command("submit")
    .description("submit a task")
    .argument("<query>", "what the task should do")
    .addOption(new Option("--mode <mode>", "execution mode").choices(["simple", "standard", "complex", "supervisor"]))
    .option("--session <id>", "session id (UUID or your own id)")
    .option("--context <key=value>", "context entry, repeatable (JSON values allowed)", collect, [])
    .addOption(new Option("--model-tier <tier>", "model tier").choices(["small", "medium", "large"]))
    .option("--idempotency-key <key>", "Idempotency-Key (default: a fresh UUID)")
    .option("-f, --follow", "follow the task live until it ends, then print the result")
    .addOption(new Option("--transport <t>", "stream transport for --follow").choices(["sse", "ws"]).default("sse"))
    .action(
      async (
        query: string,
        o: {
          mode?: string;
          session?: string;
          context: string[];
          modelTier?: string;
          idempotencyKey?: string;
          follow?: boolean;
          transport: StreamTransport;
        },
        cmd: Command,
      ) => {
        const { client, out } = ctx(cmd);
        const body: TaskSubmission = { query };
        if (o.mode) body.mode = o.mode as TaskSubmission["mode"];
        if (o.session) body.session_id = o.session;
        if (o.modelTier) body.model_tier = o.modelTier as TaskSubmission["model_tier"];
        if (o.context.length > 0) body.context = parseContextPairs(o.context) as TaskSubmission["context"];
        const submitted = await client.tasks.submit(body, { idempotencyKey: o.idempotencyKey });
        if (!o.follow) {
          print(
            out,
            submitted,
            () =>
              `${submitted.task_id}\nsession ${submitted.session_id ?? "-"}${submitted.replayed ? " (replayed)" : ""}`,
          );
          return;
        }
        if (!out.json) out.stdout.write(`task ${submitted.task_id} · session ${submitted.session_id ?? "-"}\n`);
        run.exitCode = await follow(client, out, submitted.task_id, { transport: o.transport, showResult: true });
      },
    );

  program
    .command("stream")
    .description("follow a task's events live (resumes after dropped connections)")
    .argument("<task>", "task id (the API's workflow_id)")
    .option("--types <list>", "comma-separated event types to show")
    .option("--last-event-id <id>", "resume after this stream id or seq")
    .addOption(new Option("--transport <t>", "sse or ws").choices(["sse", "ws"]).default("sse"))
    .action(
      async (task: string, o: { types?: string; lastEventId?: string; transport: StreamTransport }, cmd: Command) => {
        const { client, out } = ctx(cmd);
        const types = o.types
          ? (o.types
              .split(",")
              .map((t) => t.trim())
              .filter(Boolean) as EventType[])
          : undefined;
        run.exitCode = await follow(client, out, task, {
          transport: o.transport,
          types,
          lastEventId: o.lastEventId,
          showResult: false,
        });
      },
    );

  const tasks = program.command("tasks").description("list and inspect tasks");
  tasks
    .command("list")
    .description("list tasks, newest first")
    .option("--status <status>", "QUEUED, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT")
    .option("--session <id>", "only this session's tasks")
    .option("--limit <n>", "at most n tasks", positiveInt, 20)
    .option("--offset <n>", "skip n tasks", positiveInt, 0)
    .action(async (o: { status?: string; session?: string; limit: number; offset: number }, cmd: Command) => {
      const { client, out } = ctx(cmd);
      const rows: TaskSummary[] = [];
      for await (const t of client.tasks.list({
        status: o.status?.toUpperCase() as TaskStatusFilter | undefined,
        sessionId: o.session,
        limit: o.limit,
        offset: o.offset,
        pageSize: Math.min(100, Math.max(1, o.limit)),
      }))
        rows.push(t);
      print(out, rows, () =>
        rows.length === 0
          ? "no tasks"
          : table([
              ["TASK", "STATUS", "MODE", "CREATED", "QUERY"],
              ...rows.map((t) => [t.task_id, bare(t.status), bare(t.mode), t.created_at, short(t.query)]),
            ]),
      );
    });
  tasks
    .command("get")
    .argument("<id>", "task id")
    .description("a task's status, result and usage")
    .action(async (id: string, _o: unknown, cmd: Command) => {
      const { client, out } = ctx(cmd);
      const t = await client.tasks.get(id);
      print(out, t, () =>
        [
          `${t.task_id}  ${bare(t.status)}  ${bare(t.mode)}`,
          `query:   ${t.query}`,
          `session: ${t.session_id}`,
          ...(t.error ? [`error:   ${t.error}`] : []),
          ...(t.usage
            ? [
                `usage:   ${t.usage.total_tokens} tokens${t.usage.estimated_cost !== undefined ? `, $${t.usage.estimated_cost.toFixed(6)}` : ""}`,
              ]
            : []),
          ...(t.result !== undefined ? ["", t.result] : []),
        ].join("\n"),
      );
    });
  tasks
    .command("events")
    .argument("<id>", "task id")
    .description("a task's stored events")
    .option("--after-seq <n>", "only events after this seq", positiveInt, 0)
    .action(async (id: string, o: { afterSeq: number }, cmd: Command) => {
      const { client, out } = ctx(cmd);
      const events: StoredEvent[] = [];
      for await (const e of client.tasks.events(id, { afterSeq: o.afterSeq })) events.push(e);
      print(out, events, () =>
        table(events.map((e) => [String(e.seq), e.timestamp, e.type, e.agent_id, short(e.message, 80)])),
      );
    });
  tasks
    .command("timeline")
    .argument("<id>", "task id")
    .description("a task's deterministic timeline")
    .action(async (id: string, _o: unknown, cmd: Command) => {
      const { client, out } = ctx(cmd);
      const tl = await client.tasks.timeline(id);
      print(out, tl);
    });
  tasks
    .command("cancel")
    .argument("<id>", "task id")
    .option("--reason <text>", "why")
    .description("cancel a queued or running task")
    .action(async (id: string, o: { reason?: string }, cmd: Command) => {
      const { client, out } = ctx(cmd);
      const r = await client.tasks.cancel(id, o.reason);
      print(out, r, () => (r.accepted ? `cancellation accepted: ${r.message}` : `not cancelled: ${r.message}`));
      if (!r.accepted) run.exitCode = EXIT.API;
    });
  tasks
    .command("wait")
    .argument("<id>", "task id")
    .option("--timeout <seconds>", "give up after this long", positiveInt)
    .description("wait until the task ends; exit code tells how")
    .action(async (id: string, o: { timeout?: number }, cmd: Command) => {
      const { client, out } = ctx(cmd);
      const t = await client.tasks.waitUntilDone(id, {
        timeoutMs: o.timeout === undefined ? undefined : o.timeout * 1000,
      });
      print(out, t, () => `${t.task_id}  ${bare(t.status)}`);
      const { exitCodeOfStatus } = await import("./exit-codes.ts");
      run.exitCode = exitCodeOfStatus(t.status);
    });

  program
    .command("approve")
    .description("approve or deny a pending approval")
    .argument("<task>", "task id (the API's workflow_id)")
    .argument("<approval>", "approval id (from the APPROVAL_REQUESTED event)")
    .option("--approve", "approve it")
    .option("--deny", "deny it")
    .option("--feedback <text>", "a remark for the task")
    .action(
      async (
        task: string,
        approval: string,
        o: { approve?: boolean; deny?: boolean; feedback?: string },
        cmd: Command,
      ) => {
        if (o.approve === o.deny)
          throw new CommanderError(EXIT.USAGE, "tog.usage", "error: give exactly one of --approve or --deny");
        const { client, out } = ctx(cmd);
        const r = await client.approvals.decide({
          taskId: task,
          approvalId: approval,
          approved: o.approve === true,
          feedback: o.feedback,
        });
        print(out, r, () => `${o.approve ? "approved" : "denied"}: ${r.message}`);
      },
    );

  const sessions = program.command("sessions").description("your sessions");
  sessions
    .command("list")
    .option("--limit <n>", "at most n sessions", positiveInt, 20)
    .option("--offset <n>", "skip n sessions", positiveInt, 0)
    .action(async (o: { limit: number; offset: number }, cmd: Command) => {
      const { client, out } = ctx(cmd);
      const rows: SessionSummary[] = [];
      for await (const s of client.sessions.list({
        limit: o.limit,
        offset: o.offset,
        pageSize: Math.min(100, Math.max(1, o.limit)),
      }))
        rows.push(s);
      print(out, rows, () =>
        rows.length === 0
          ? "no sessions"
          : table([
              ["SESSION", "TASKS", "TOKENS", "CREATED", "TITLE"],
              ...rows.map((s) => [
                s.session_id,
                String(s.task_count),
                String(s.tokens_used),
                s.created_at,
                short((s as { title?: string | null }).title ?? ""),
              ]),
            ]),
      );
    });
  sessions
    .command("get")
    .argument("<id>", "session UUID or your own id")
    .action(async (id: string, _o: unknown, cmd: Command) => {
      const { client, out } = ctx(cmd);
      print(out, await client.sessions.get(id));
    });
  sessions
    .command("history")
    .argument("<id>", "session UUID or your own id")
    .action(async (id: string, _o: unknown, cmd: Command) => {
      const { client, out } = ctx(cmd);
      const h = await client.sessions.history(id);
      print(out, h, () => table(h.tasks.map((t) => [t.task_id, bare(t.status), short(t.query)])));
    });
  sessions
    .command("turns")
    .argument("<id>", "session UUID or your own id")
    .action(async (id: string, _o: unknown, cmd: Command) => {
      const { client, out } = ctx(cmd);
      const turns: SessionTurn[] = [];
      for await (const t of client.sessions.turns(id)) turns.push(t);
      print(out, turns, () =>
        turns.map((t) => `#${t.turn} ${t.user_query}\n  → ${short(t.final_output, 200)}`).join("\n"),
      );
    });
  sessions
    .command("rename")
    .argument("<id>", "session UUID or your own id")
    .argument("<title>", "new title (at most 60 characters)")
    .action(async (id: string, title: string, _o: unknown, cmd: Command) => {
      const { client, out } = ctx(cmd);
      const r = await client.sessions.rename(id, title);
      print(out, r, () => `renamed: ${r.title}`);
    });
  sessions
    .command("delete")
    .argument("<id>", "session UUID or your own id")
    .action(async (id: string, _o: unknown, cmd: Command) => {
      const { client, out } = ctx(cmd);
      await client.sessions.delete(id);
      print(out, { deleted: true, session_id: id }, () => `deleted ${id}`);
    });

  return program;
}

/** Runs `tog` with these arguments (without node and script); resolves with the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const run = { exitCode: EXIT.OK as number };
  const program = buildProgram(run);
  try {
    await program.parseAsync(argv, { from: "user" });
    return run.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.code === "commander.help")
        return EXIT.OK;
      if (err.code === "tog.usage") process.stderr.write(`${err.message}\n`);
      return EXIT.USAGE;
    }
    const json = process.argv.includes("--json");
    const e = err as { message?: string; status?: number };
    if (json)
      process.stderr.write(
        `${JSON.stringify({ error: e.message ?? String(err), ...(e.status !== undefined ? { status: e.status } : {}) })}\n`,
      );
    else process.stderr.write(`tog: ${e.status !== undefined ? `${e.status} ` : ""}${e.message ?? String(err)}\n`);
    return exitCodeOf(err);
  }
}
