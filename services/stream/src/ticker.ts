// One interval timer for many connections (keep-alive comments, WebSocket pings) instead of a
// timer per connection: idle connections are the bulk of a fan-out's memory.

export class Ticker<T> {
  readonly #items = new Set<T>();
  readonly #timer: NodeJS.Timeout;

  constructor(intervalMs: number, tick: (item: T) => void) {
    this.#timer = setInterval(() => {
      for (const item of this.#items) tick(item);
    }, intervalMs);
    this.#timer.unref();
  }

  add(item: T): void {
    this.#items.add(item);
  }

  delete(item: T): void {
    this.#items.delete(item);
  }

  get size(): number {
    return this.#items.size;
  }

  /** A snapshot, for shutdown. */
  items(): T[] {
    return [...this.#items];
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

/** Counts open streams against the instance's limit. */
export class ConnectionBudget {
  readonly max: number;
  #open = 0;

  constructor(max: number) {
    this.max = max;
  }

  get open(): number {
    return this.#open;
  }

  /** Takes a slot; false when the instance is full. */
  tryTake(): boolean {
    if (this.#open >= this.max) return false;
    this.#open++;
    return true;
  }

  give(): void {
    this.#open = Math.max(0, this.#open - 1);
  }
}
