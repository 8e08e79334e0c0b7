import { loadCatalog } from "@tog/catalog";
import { createLogger } from "@tog/core";
import { createLlmRouter, type LlmRouter, type LlmRouterOptions } from "@tog/providers";
import { builtinTools, createToolRegistry, type ToolRegistry } from "@tog/tools";
import { createMemoryRun, type MemoryRun, type MemoryRunOptions, type RecordedEvent } from "./memory-context.ts";

// The real catalog, the real offline provider behind the real router, the real built-in tools;
// wrapped only to count calls (so a replay can prove it called nothing).

export const catalog = loadCatalog();
export const logger = createLogger({ service: "flows-test", level: "silent" });

export interface Counted {
  llm: LlmRouter;
  tools: ToolRegistry;
  calls: { llm: number; tools: number };
}

export function offlineRouter(options: Partial<LlmRouterOptions> = {}): LlmRouter {
  return createLlmRouter({ catalog, apiKeys: {}, logger, ...options });
}

export function counted(
  llm: LlmRouter = offlineRouter(),
  tools: ToolRegistry = createToolRegistry(builtinTools()),
): Counted {
  const calls = { llm: 0, tools: 0 };
  return {
    calls,
    llm: {
      ...llm,
      complete(o) {
        calls.llm++;
        return llm.complete(o);
      },
    },
    tools: {
      ...tools,
      invoke(name, args, o) {
        calls.tools++;
        return tools.invoke(name, args, o);
      },
    },
  };
}

export function memoryRun(
  options: Omit<MemoryRunOptions, "llm" | "tools" | "catalog"> &
    Partial<Pick<MemoryRunOptions, "llm" | "tools" | "catalog">>,
  deps: Counted = counted(),
): MemoryRun {
  return createMemoryRun({ catalog, llm: deps.llm, tools: deps.tools, ...options });
}

export const types = (events: readonly RecordedEvent[]) => events.map((e) => e.type);
export const ofType = <T extends RecordedEvent["type"]>(events: readonly RecordedEvent[], type: T) =>
  events.filter((e) => e.type === type);
export const byAgent = (events: readonly RecordedEvent[], agentId: string) =>
  events.filter((e) => e.agent_id === agentId);

/** Events without their timing fields, for determinism comparisons. */
export function timeless(events: readonly RecordedEvent[]) {
  return events.map((e) => {
    const data = { ...e.data };
    for (const k of ["duration_ms", "timestamp"]) if (k in data) data[k] = 0;
    return { ...e, data };
  });
}

/** The type sequence with consecutive LLM_PARTIALs folded into one entry. */
export function shape(events: readonly RecordedEvent[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    const label = `${e.agent_id}:${e.type}`;
    if (e.type === "LLM_PARTIAL" && out.at(-1) === `${label}*`) continue;
    out.push(e.type === "LLM_PARTIAL" ? `${label}*` : label);
  }
  return out;
}
