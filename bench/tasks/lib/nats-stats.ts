// NATS messages per request or task, from the server's monitoring endpoint (`/connz`): for each
// client connection, what it sent to the server (in) and what the server delivered to it (out),
// summed by connection name (the services name their connections after themselves; the load
// client is `bench-load`). Counts, unlike CPU figures, do not move with the machine's speed.

export interface NatsCounts {
  in: number;
  out: number;
}

/** Counters by connection id, with the connection's name. */
export type NatsSnapshot = Map<number, NatsCounts & { name: string }>;

interface Connz {
  connections?: { cid: number; name?: string; in_msgs: number; out_msgs: number }[];
}

export async function natsSnapshot(monitorUrl: string): Promise<NatsSnapshot> {
  const res = await fetch(`${monitorUrl}/connz?limit=4096`);
  if (!res.ok) throw new Error(`GET ${monitorUrl}/connz: ${res.status}`);
  const body = (await res.json()) as Connz;
  return new Map(
    (body.connections ?? []).map((c) => [c.cid, { name: c.name || "(unnamed)", in: c.in_msgs, out: c.out_msgs }]),
  );
}

/** Messages between two snapshots by connection name; a connection opened in between counts whole. */
export function natsDelta(before: NatsSnapshot, after: NatsSnapshot): Map<string, NatsCounts> {
  const byName = new Map<string, NatsCounts>();
  for (const [cid, a] of after) {
    const b = before.get(cid);
    const sum = byName.get(a.name) ?? { in: 0, out: 0 };
    sum.in += a.in - (b?.in ?? 0);
    sum.out += a.out - (b?.out ?? 0);
    byName.set(a.name, sum);
  }
  return byName;
}
