// What a gateway's recent requests for one model had in common, for routing (routing.ts). A prompt's leading blocks
// that most recent prompts share (the chat template's first block, a default system prompt) are cached on every
// worker that served anything, so matching them says little about where a tenant's conversation lives: counting
// them as a cached prefix sent every new tenant to the same worker at equal load. The window also says how many
// recent requests each worker took, so that a miss at equal load goes to the worker that took fewest (a worker
// added since takes new tenants first).

/** Requests remembered (per model and pool). */
export const RECENT_REQUESTS = 32;
/** Leading blocks of each remembered prompt counted (bounds memory: 32 × 4,096 hashes). */
export const COUNTED_BLOCKS = 4_096;

/** The last RECENT_REQUESTS prompts' chain hashes and where each went. */
export class RecentPrompts<W> {
  readonly #window: { hashes: readonly string[]; worker: W }[] = [];
  /** Per chain hash: how many remembered prompts hold it. */
  readonly #counts = new Map<string, number>();

  constructor(private readonly size: number = RECENT_REQUESTS) {}

  /**
   * How many leading blocks of `hashes` more than half of the remembered prompts share (0 until two are remembered:
   * one prompt cannot tell a template from a tenant). A chain hash names its whole prefix, so block i is shared
   * only where every block before it is.
   */
  commonBlocks(hashes: readonly string[]): number {
    if (this.#window.length < 2) return 0;
    const needed = Math.floor(this.#window.length / 2) + 1;
    let common = 0;
    while (common < hashes.length && (this.#counts.get(hashes[common]!) ?? 0) >= needed) common++;
    return common;
  }

  /** Remembered requests that went to `worker`. */
  routedTo(worker: W): number {
    let count = 0;
    for (const entry of this.#window) if (entry.worker === worker) count++;
    return count;
  }

  /** Remembers a request with the prompt `hashes` sent to `worker`, forgetting the oldest past the window. */
  record(hashes: readonly string[], worker: W): void {
    const counted = hashes.slice(0, COUNTED_BLOCKS);
    this.#window.push({ hashes: counted, worker });
    for (const hash of counted) this.#counts.set(hash, (this.#counts.get(hash) ?? 0) + 1);
    if (this.#window.length <= this.size) return;
    const oldest = this.#window.shift()!;
    for (const hash of oldest.hashes) {
      const left = this.#counts.get(hash)! - 1;
      if (left === 0) this.#counts.delete(hash);
      else this.#counts.set(hash, left);
    }
  }
}
