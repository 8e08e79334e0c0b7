import { JetStreamApiError } from "@nats-io/jetstream";
import { systemSubjects, type Bus } from "@tog/bus";
import { lastEventTextOf } from "@tog/events";

// Where a task's event subject stands in the real-time stream: the seq of its last
// retained event and that message's stream sequence (the value `expect.lastSubjectSequence`
// must carry). Both are 0 when nothing is retained (never published, or aged out).

const NO_MESSAGE_FOUND = 10037;

export interface BusPosition {
  lastSeq: number;
  lastStreamSeq: number;
}

export async function busPosition(bus: Bus, taskId: string): Promise<BusPosition> {
  try {
    const msg = await bus.jsm.streams.getMessage(bus.streamName("EVENTS"), {
      last_by_subj: systemSubjects(bus.prefix).events(taskId),
    });
    if (!msg) return { lastSeq: 0, lastStreamSeq: 0 };
    // A message holds the events of one write; its last line is the subject's last event.
    const event = JSON.parse(lastEventTextOf(msg.string())) as { seq?: unknown };
    return { lastSeq: typeof event.seq === "number" ? event.seq : 0, lastStreamSeq: msg.seq };
  } catch (err) {
    if (err instanceof JetStreamApiError && err.code === NO_MESSAGE_FOUND) return { lastSeq: 0, lastStreamSeq: 0 };
    throw err;
  }
}
