// A bump allocator over a (shared) WebAssembly.Memory: allocations never move, scratch is freed by mark/release.
import { WasmMemoryError } from "./errors.js";
import type { WasmMemory } from "./webassembly.js";

/** Bytes per WebAssembly page. */
export const PAGE_BYTES = 65536;
/** Smallest growth step, so that many small allocations do not grow the memory page by page. */
const MIN_GROWTH_PAGES = 256; // 16 MiB

/** Allocates byte ranges of a WebAssembly memory upwards from `base`, growing the memory as needed. */
export class Arena {
  #top: number;

  constructor(
    private readonly memory: WasmMemory,
    /** First byte the arena may hand out (NOTE: the bytes below belong to the module's static data). */
    readonly base: number,
    /** The memory's maximum size in bytes. */
    readonly maximumBytes: number,
  ) {
    this.#top = base;
  }

  /** First byte past the last allocation. */
  get top(): number {
    return this.#top;
  }

  /** Reserves `bytes` bytes aligned to `align` (a power of two) and returns the byte offset of the first. */
  alloc(bytes: number, align = 64): number {
    if (!Number.isInteger(bytes) || bytes < 0) throw new RangeError(`alloc: byte count must be a non-negative integer, got ${bytes}`);
    if (!Number.isInteger(align) || align <= 0 || (align & (align - 1)) !== 0) throw new RangeError(`alloc: alignment must be a power of two, got ${align}`);
    const pointer = Math.ceil(this.#top / align) * align;
    const end = pointer + bytes;
    if (end > this.maximumBytes) throw new WasmMemoryError(bytes, this.#top - this.base, this.maximumBytes);
    const size = this.memory.buffer.byteLength;
    if (end > size) {
      const maximumPages = this.maximumBytes / PAGE_BYTES;
      const currentPages = size / PAGE_BYTES;
      const neededPages = Math.ceil((end - size) / PAGE_BYTES);
      this.memory.grow(Math.min(maximumPages - currentPages, Math.max(neededPages, MIN_GROWTH_PAGES)));
    }
    this.#top = end;
    return pointer;
  }

  /** The current top, to hand back to release() and free everything allocated after this call. */
  mark(): number {
    return this.#top;
  }

  /** Frees every allocation made since mark() returned `mark`. */
  release(mark: number): void {
    if (!Number.isInteger(mark) || mark < this.base || mark > this.#top) {
      throw new RangeError(`release: ${mark} is not a mark of this arena (base ${this.base}, top ${this.#top})`);
    }
    this.#top = mark;
  }
}
