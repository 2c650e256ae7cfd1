// A one-consumer async queue of events: the engine pushes as it steps, the caller iterates with for await.
// Leaving the loop early (break, return, throw) calls onCancel, so a consumer that stops listening stops the work.

/** Push side for the producer, async-iterable side for one consumer. */
export class EventChannel<T> implements AsyncIterable<T> {
  private readonly buffered: T[] = [];
  private waiter: ((result: IteratorResult<T>) => void) | undefined;
  private closed = false;

  constructor(private readonly onCancel: () => void) {}

  /** Delivers an event (ignored once closed). */
  push(event: T): void {
    if (this.closed) return;
    if (this.waiter) {
      const resolve = this.waiter;
      this.waiter = undefined;
      resolve({ value: event, done: false });
    } else {
      this.buffered.push(event);
    }
  }

  /** Ends the stream after the events already pushed. */
  close(): void {
    this.closed = true;
    if (this.waiter && this.buffered.length === 0) {
      const resolve = this.waiter;
      this.waiter = undefined;
      resolve({ value: undefined, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.buffered.length > 0) return Promise.resolve({ value: this.buffered.shift()!, done: false });
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => { this.waiter = resolve; });
      },
      return: () => {
        if (!this.closed) this.onCancel();
        this.closed = true;
        this.buffered.length = 0;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
