// The submit transactions open in this process, by task id. A task's run is published inside its
// submit's transaction, so it often reaches a worker before the COMMIT, and a claim sent then
// finds no row; the worker retries it after 2, 4, 8… ms (run.repository.ts). A worker in the
// same process (ORCHESTRATOR_WORKER=on) instead waits here for that transaction to end, and its
// first claim finds the row (docs/performance.md "Claims that wait for the local submit").

export class LocalSubmits {
  readonly #open = new Map<string, Promise<void>>();

  /** Marks the tasks as being submitted until `work` settles (committed or rolled back); returns `work`. */
  track<T>(taskIds: readonly string[], work: Promise<T>): Promise<T> {
    const ended = work.then(
      () => undefined,
      () => undefined,
    );
    const keys = taskIds.map((id) => id.toLowerCase());
    for (const key of keys) this.#open.set(key, ended);
    void ended.then(() => {
      for (const key of keys) if (this.#open.get(key) === ended) this.#open.delete(key);
    });
    return work;
  }

  /** Settles when this process's open submit of the task ends; undefined when there is none. */
  ended(taskId: string): Promise<void> | undefined {
    return this.#open.get(taskId.toLowerCase());
  }

  /** Submits open now (for tests and metrics). */
  get size(): number {
    return this.#open.size;
  }
}
