// How many KV blocks a memory budget buys: the budget comes from config as bytes or as a fraction of free memory,
// and is capped by the room left in the backend's address space.
import { freemem } from "node:os";

/** Element type of the KV cache. */
export type KvDtype = "f32" | "f16";

/** The KV memory budget: exactly one of bytes or memoryFraction (default: memoryFraction 0.4). */
export interface KvBudget {
  /** Bytes for K and V over every layer. */
  bytes?: number;
  /** Fraction (0, 1] of the machine's free memory when the model loads. */
  memoryFraction?: number;
}

/** Bytes one block of `blockSize` positions takes over all layers, K and V. */
export function kvBlockBytes(layers: number, kvDim: number, blockSize: number, dtype: KvDtype): number {
  return layers * 2 * blockSize * kvDim * (dtype === "f16" ? 2 : 4);
}

/** The default share of free memory the KV cache takes. */
export const DEFAULT_KV_MEMORY_FRACTION = 0.4;

/**
 * Blocks that fit the budget and the `roomBytes` the backend has left, at least `minimumBlocks` (one full context
 * for one sequence). `reservedBytes` of the budget are spoken for already (sliding-window layers' fixed slots).
 * @throws RangeError naming the bad field, or saying the budget cannot hold one full context.
 */
export function kvBlocksForBudget(budget: KvBudget, blockBytes: number, roomBytes: number, minimumBlocks: number, freeBytes = freemem(), reservedBytes = 0): number {
  if (budget.bytes !== undefined && budget.memoryFraction !== undefined) throw new RangeError("kvCache: give bytes or memoryFraction, not both");
  if (budget.bytes !== undefined && (!Number.isSafeInteger(budget.bytes) || budget.bytes <= 0)) {
    throw new RangeError(`kvCache.bytes must be a positive integer, got ${budget.bytes}`);
  }
  const fraction = budget.memoryFraction ?? DEFAULT_KV_MEMORY_FRACTION;
  if (!(fraction > 0 && fraction <= 1)) throw new RangeError(`kvCache.memoryFraction must be in (0, 1], got ${budget.memoryFraction}`);
  const wanted = (budget.bytes ?? Math.floor(freeBytes * fraction)) - reservedBytes;
  const blocks = blockBytes > 0 ? Math.floor(Math.min(wanted, roomBytes) / blockBytes) : minimumBlocks;
  if (blocks < minimumBlocks) {
    const need = minimumBlocks * blockBytes;
    const limit = wanted <= roomBytes ? `the KV budget of ${wanted} bytes` : `the ${roomBytes} bytes of memory left after the weights`;
    throw new RangeError(`${limit} holds ${blocks} KV blocks; one full context needs ${minimumBlocks} (${need} bytes): raise the budget or lower contextSize`);
  }
  return blocks;
}
