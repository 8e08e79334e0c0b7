import { randomUUID } from "node:crypto";
import { createLogger, type Logger } from "@tog/core";
import { connectBus, ensureConsumers, ensureStreams, eventPersisterConsumer, systemTopology, type Bus } from "@tog/bus";
import { buildEvent, eventMessageId } from "@tog/events";
import { testInfraConfig, uniqueId } from "@tog/testkit";

export const silentLogger: Logger = createLogger({ service: "orchestrator-events-test", level: "silent" });

/** A bus with a prefix of its own, its streams and consumers provisioned. */
export async function openProvisionedBus(label: string): Promise<Bus> {
  const bus = await connectBus({
    url: testInfraConfig.TEST_NATS_URL,
    name: `test-${label}`,
    prefix: uniqueId(label),
    logger: silentLogger,
  });
  const topology = systemTopology({ prefix: bus.prefix });
  await ensureStreams(bus, topology.streams);
  await ensureConsumers(bus, [...topology.consumers, eventPersisterConsumer({ prefix: bus.prefix })]);
  return bus;
}

export async function closeBus(bus: Bus): Promise<void> {
  const mine = `${bus.prefix.toUpperCase()}_`;
  const names: string[] = [];
  for await (const name of bus.jsm.streams.names()) if (name.startsWith(mine)) names.push(name);
  await Promise.all(names.map((n) => bus.jsm.streams.delete(n)));
  await bus.close();
}

export const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";

export interface EncodedEvent {
  taskId: string;
  seq: number;
  msgId: string;
  json: string;
}

/** `count` events of one task (seq 1..count), each JSON-encoded once, as the runtime does. */
export function encodedEvents(taskId: string, count: number, from = 1): EncodedEvent[] {
  const out: EncodedEvent[] = [];
  for (let seq = from; seq < from + count; seq++) {
    const event = buildEvent({
      workflow_id: taskId,
      type: "LLM_PARTIAL",
      agent_id: seq % 2 === 0 ? "orchestrator" : "agent-Ω",
      message: `chunk ${seq}`,
      seq,
      trace_id: TRACE_ID,
      // Escapes, non-ASCII and astral characters must survive the trip unchanged.
      data: { chunk: `héllo "wörld" \\ 🌍 ${seq}\n\t\u0001`, chunk_index: seq - 1, total_tokens_so_far: seq * 3 },
      at: Date.UTC(2026, 0, 1) + seq,
    });
    out.push({ taskId, seq, msgId: eventMessageId(event), json: JSON.stringify(event) });
  }
  return out;
}

export const newTaskId = (): string => randomUUID();

export async function waitFor(check: () => Promise<boolean>, timeoutMs = 15_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
