import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { ConflictError } from "@tog/core";
import { publish, systemSubjects, type Bus } from "@tog/bus";
import { deleteStreamsOf, messagesOnBus, openTestBus, provisionTestBus } from "@tog/testkit";
import { MESSAGE_BUDGET_BYTES, TaskEventEmitter } from "../../src/runtime/event-emitter.ts";
import { pending, type PendingEvent } from "../../src/runtime/flow-context.ts";
import { countingBus, logger } from "./harness.ts";

// How a run's emitter publishes (event-emitter.ts, docs/decisions.md "One message per write"):
// the events of a write go out as one fenced message; live events one at a time, each fenced on
// the one before. Real JetStream.

let bus: Bus;
beforeAll(async () => {
  bus = await openTestBus("emitter");
  await provisionTestBus(bus);
});
afterAll(async () => {
  await deleteStreamsOf(bus);
  await bus.close();
});

function emitterOf(b: Bus, taskId: string, failures: Error[] = [], perEvent = false): TaskEventEmitter {
  return new TaskEventEmitter({
    perEvent,
    bus: b,
    taskId,
    traceId: "0".repeat(32),
    defaultAgentId: "orchestrator",
    start: { lastSeq: 0, lastStreamSeq: 0 },
    logger,
    onFailure: (err) => failures.push(err),
  });
}

const thinking = (n: number): PendingEvent => pending("AGENT_THINKING", `thought ${n}`, { thought: `t${n}` } as never);

/** Event seqs of each message on the task's subject, in stream order. */
async function messageSeqs(taskId: string): Promise<number[][]> {
  return (await messagesOnBus(bus, taskId)).map((texts) => texts.map((t) => (JSON.parse(t) as { seq: number }).seq));
}

/** Event seqs on the task's subject, in stream order. */
async function seqsOnBus(taskId: string): Promise<number[]> {
  return (await messageSeqs(taskId)).flat();
}

describe("the run's event emitter", () => {
  it("publishes the events of a write as one message, in seq order", async () => {
    const taskId = randomUUID();
    const counted = countingBus(bus);
    const emitter = emitterOf(counted.bus, taskId);
    await emitter.commit([thinking(1), thinking(2), thinking(3)], async () => undefined);
    expect(counted.publishes()).toBe(1);
    expect(counted.eventsPublished()).toBe(3);
    // The next publish is fenced on that message: it is accepted.
    await emitter.commit([thinking(4)], async () => undefined);
    expect(await messageSeqs(taskId)).toEqual([[1, 2, 3], [4]]);
  });

  it("cuts a write too large for one message into several, each fenced on the one before", async () => {
    const taskId = randomUUID();
    const counted = countingBus(bus);
    const emitter = emitterOf(counted.bus, taskId);
    const big = (n: number): PendingEvent =>
      pending("AGENT_THINKING", `thought ${n}`, { thought: "x".repeat(MESSAGE_BUDGET_BYTES / 3) } as never);
    await emitter.commit([1, 2, 3, 4, 5, 6, 7].map(big), async () => undefined);
    await emitter.commit([thinking(8)], async () => undefined);
    expect(await messageSeqs(taskId)).toEqual([[1, 2], [3, 4], [5, 6], [7], [8]]);
    expect(counted.maxInFlight()).toBe(1);
  });

  it("publishes one message per event when told to (an upgrade from per-event readers)", async () => {
    const taskId = randomUUID();
    const counted = countingBus(bus);
    const emitter = emitterOf(counted.bus, taskId, [], true);
    await emitter.commit([thinking(1), thinking(2), thinking(3)], async () => undefined);
    expect(counted.publishes()).toBe(3);
    expect(counted.maxInFlight()).toBe(3);
    await emitter.commit([thinking(4)], async () => undefined);
    expect(await messageSeqs(taskId)).toEqual([[1], [2], [3], [4]]);
  });

  it("publishes live events one at a time, each fenced on the one before", async () => {
    const taskId = randomUUID();
    const counted = countingBus(bus);
    const emitter = emitterOf(counted.bus, taskId);
    for (let i = 1; i <= 4; i++) emitter.emit(thinking(i));
    await emitter.flush();
    expect(counted.publishes()).toBe(4);
    expect(counted.maxInFlight()).toBe(1);
    expect(await seqsOnBus(taskId)).toEqual([1, 2, 3, 4]);
  });

  it("fails the run when another writer published on the subject first (the whole write is fenced)", async () => {
    const taskId = randomUUID();
    const failures: Error[] = [];
    const emitter = emitterOf(bus, taskId, failures);
    // Another writer — a worker that took the task over — got there first.
    await publish(bus, systemSubjects(bus.prefix).events(taskId), { seq: 1, type: "WORKFLOW_STARTED" });
    await expect(emitter.commit([thinking(1), thinking(2)], async () => undefined)).rejects.toBeInstanceOf(
      ConflictError,
    );
    expect(failures[0]).toBeInstanceOf(ConflictError);
    // Nothing after the failure goes out.
    emitter.emit(thinking(3));
    await expect(emitter.flush()).rejects.toBeInstanceOf(ConflictError);
    // Seq 1 stays the other writer's, and nothing of the refused write reached the bus.
    expect(await seqsOnBus(taskId)).toEqual([1]);
  });
});
