import type { Subscription } from "@nats-io/transport-node";
import type { Bus } from "@tog/bus";

// One core-NATS subscription per worker process for the signal hints of every task
// (`<prefix>.signals.*`), dispatched to the runs of this process; a subscription per run would
// cost two extra protocol writes per task.

export interface SignalListener {
  /** Calls `onSignal` for each hint about `taskId` until the returned function is called. */
  listen(taskId: string, onSignal: () => void): () => void;
  close(): void;
}

export function createSignalListener(bus: Bus): SignalListener {
  const listeners = new Map<string, Set<() => void>>();
  const prefix = `${bus.subject("signals")}.`;
  const subscription: Subscription = bus.nc.subscribe(`${prefix}*`, {
    callback: (_err, msg) => {
      const set = listeners.get(msg.subject.slice(prefix.length));
      if (set) for (const fn of set) fn();
    },
  });
  return {
    listen(taskId, onSignal) {
      let set = listeners.get(taskId);
      if (!set) listeners.set(taskId, (set = new Set()));
      set.add(onSignal);
      return () => {
        set.delete(onSignal);
        if (set.size === 0) listeners.delete(taskId);
      };
    },
    close: () => subscription.unsubscribe(),
  };
}
