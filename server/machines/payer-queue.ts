// One settlement per payer at a time in this process, in arrival order, with a cap on how many may wait: each then
// sees the balance the one before left, and one payer cannot pin unbounded connections and journal rows.

/** A place in a payer's queue: wait for `turn`, then `leave` (at once, or when the work is done or given up on). */
export interface QueuePlace {
  /** How many places were ahead when this one was taken (each is bounded in time: the lease covers the wait). */
  readonly ahead: number;
  /** Resolves when every place ahead has left. */
  readonly turn: Promise<void>;
  /** Gives the place up, letting the next one go (idempotent). */
  leave(): void;
}

interface Queue {
  tail: Promise<void>;
  depth: number;
}

/** Per payer (any case), the settlements taken in this process and not yet finished or given up on. */
export class PayerQueues {
  private readonly queues = new Map<string, Queue>();

  /** @param maxDepth how many places one payer may hold at once (the one settling included). */
  constructor(readonly maxDepth: number) {}

  /** A place at the end of `payer`'s queue, or undefined when it already holds `maxDepth`. */
  enter(payer: string): QueuePlace | undefined {
    const key = payer.toLowerCase();
    const queue = this.queues.get(key) ?? { tail: Promise.resolve(), depth: 0 };
    if (queue.depth >= this.maxDepth) return undefined;
    let finished!: () => void;
    const done = new Promise<void>((resolve) => (finished = resolve));
    const turn = queue.tail;
    // The next place waits for this one and for every one before it, whichever order they leave in.
    queue.tail = turn.then(() => done);
    const ahead = queue.depth;
    queue.depth += 1;
    this.queues.set(key, queue);
    let left = false;
    return {
      ahead,
      turn,
      leave: () => {
        if (left) return;
        left = true;
        finished();
        queue.depth -= 1;
        if (queue.depth === 0 && this.queues.get(key) === queue) this.queues.delete(key);
      },
    };
  }

  /** Whether `payer` has settlements taken in this process (the reconciler leaves those payers alone). */
  busy(payer: string): boolean {
    return this.queues.has(payer.toLowerCase());
  }
}
