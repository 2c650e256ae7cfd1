// One in-flight seed read per daily counter: concurrent reserves that find the same day's counter missing share one
// `seed()` call (a read of the usage table) instead of issuing one each.
/** Shares the pending `seed()` of each stored key among the callers that ask while it runs. */
export class SeedReads {
  private readonly pending = new Map<string, Promise<number>>();

  /**
   * The seed for the counter `name`: the pending read if one is running, else a new call of `seed`.
   * @throws RangeError when the seed is not a finite number >= 0; whatever `seed` throws (e.g. the database is down).
   */
  read(name: string, seed: () => Promise<number>): Promise<number> {
    const running = this.pending.get(name);
    if (running) return running;
    // NOTE: `seed` runs in a later microtask, so the entry exists before it can settle and `finally` always removes it.
    const reading = Promise.resolve()
      .then(seed)
      .then((value) => {
        if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
          throw new RangeError(`daily seed for ${name} must be a number >= 0, got ${String(value)}`);
        }
        return value;
      })
      .finally(() => this.pending.delete(name));
    this.pending.set(name, reading);
    return reading;
  }
}
