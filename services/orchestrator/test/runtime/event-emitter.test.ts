import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { ConflictError } from "@tog/core";
import { publish, systemSubjects, type Bus } from "@tog/bus";
import { deleteStreamsOf, openTestBus, provisionTestBus } from "@tog/testkit";
import { TaskEventEmitter } from "../../src/runtime/event-emitter.ts";
import { pending, type PendingEvent } from "../../src/runtime/flow-context.ts";
import { countingBus, logger } from "./harness.ts";

// How a run's emitter publishes (event-emitter.ts, docs/performance.md "Publishing written
// events together"): the events of a write go out together, only the first fenced; live events
// one at a time, each fenced on the one before. Real JetStream.

let bus: Bus;
beforeAll(async () => {
  bus = await openTestBus("emitter");
  await provisionTestBus(bus);
});
afterAll(async () => {
  await deleteStreamsOf(bus);
  await bus.close();
});

function emitterOf(b: Bus, taskId: string, failures: Error[] = []): TaskEventEmitter {
  return new TaskEventEmitter({
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

/** Event seqs on the task's subject, in stream order. */
async function seqsOnBus(taskId: string): Promise<number[]> {
  const subject = systemSubjects(bus.prefix).events(taskId);
  const seqs: number[] = [];
  for (let from = 0; ; ) {
    const msg = await bus.jsm.streams
      .getMessage(bus.streamName("EVENTS"), { seq: from, next_by_subj: subject } as never)
      .catch(() => null);
    if (!msg) return seqs;
    seqs.push(msg.json<{ seq: number }>().seq);
    from = msg.seq + 1;
  }
}

describe("the run's event emitter", () => {
  it("publishes the events of a write together: one round trip, in seq order", async () => {
    const taskId = randomUUID();
    const counted = countingBus(bus);
    const emitter = emitterOf(counted.bus, taskId);
    await emitter.commit([thinking(1), thinking(2), thinking(3)], async () => undefined);
    expect(counted.publishes()).toBe(3);
    expect(counted.maxInFlight()).toBe(3);
    // The next publish is fenced on the last of them: it is accepted.
    await emitter.commit([thinking(4)], async () => undefined);
    expect(await seqsOnBus(taskId)).toEqual([1, 2, 3, 4]);
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

  it("fails the run when another writer published on the subject first (the first event is fenced)", async () => {
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
    // Seq 1 stays the other writer's; seq 2 is a written event (the same for any writer), no seq twice.
    const seqs = await seqsOnBus(taskId);
    expect(seqs[0]).toBe(1);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs).not.toContain(3);
  });
});
