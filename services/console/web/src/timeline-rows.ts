import type { TaskEvent } from "./api.ts";
import { describeEvent, type EventLine } from "./event-view.ts";

// The live timeline's rows: one per event, except that consecutive LLM_PARTIAL chunks of one
// agent are joined into one row holding the streamed text.

export type TimelineRow =
  | { kind: "event"; event: TaskEvent; line: EventLine }
  | { kind: "stream"; agentId: string; firstSeq: number; lastSeq: number; text: string; timestamp: string };

export function buildRows(events: readonly TaskEvent[]): TimelineRow[] {
  const rows: TimelineRow[] = [];
  for (const e of events) {
    if (e.type === "LLM_PARTIAL") {
      const last = rows.at(-1);
      const chunk = typeof e.data?.chunk === "string" ? e.data.chunk : "";
      if (last?.kind === "stream" && last.agentId === e.agent_id) {
        last.text += chunk;
        last.lastSeq = e.seq;
      } else {
        rows.push({
          kind: "stream",
          agentId: e.agent_id,
          firstSeq: e.seq,
          lastSeq: e.seq,
          text: chunk,
          timestamp: e.timestamp,
        });
      }
      continue;
    }
    rows.push({ kind: "event", event: e, line: describeEvent(e) });
  }
  return rows;
}

export interface Usage {
  tokens: number;
  costUsd: number;
  final: boolean;
}

/** Tokens and cost so far: the sum of the model outputs, or the task's totals once it completed. */
export function usageOf(events: readonly TaskEvent[]): Usage {
  let tokens = 0;
  let costUsd = 0;
  for (const e of events) {
    if (e.type === "WORKFLOW_COMPLETED") {
      return {
        tokens: Number(e.data?.total_tokens ?? tokens),
        costUsd: Number(e.data?.total_cost_usd ?? costUsd),
        final: true,
      };
    }
    if (e.type === "LLM_OUTPUT") {
      tokens += Number(e.data?.tokens_used ?? 0);
      costUsd += Number(e.data?.cost_usd ?? 0);
    }
  }
  return { tokens, costUsd, final: false };
}

export interface PendingApproval {
  approvalId: string;
  toolName: string;
  operation: string;
  riskLevel: string;
  details: unknown;
}

/** Approvals requested and not decided yet. */
export function pendingApprovals(events: readonly TaskEvent[]): PendingApproval[] {
  const decided = new Set(events.filter((e) => e.type === "APPROVAL_DECISION").map((e) => String(e.data?.approval_id)));
  const ended = events.some(
    (e) => e.type === "WORKFLOW_COMPLETED" || (e.type === "ERROR_OCCURRED" && e.data?.terminal === true),
  );
  if (ended) return [];
  return events
    .filter((e) => e.type === "APPROVAL_REQUESTED" && !decided.has(String(e.data?.approval_id)))
    .map((e) => ({
      approvalId: String(e.data?.approval_id),
      toolName: String(e.data?.tool_name ?? ""),
      operation: String(e.data?.operation ?? ""),
      riskLevel: String(e.data?.risk_level ?? ""),
      details: e.data?.details,
    }));
}
