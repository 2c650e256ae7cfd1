// Where a model's weights, KV cache and buffers go when one WebAssembly memory (4 GiB at most) cannot hold them all:
// a pure plan, made before anything is allocated, of consecutive layers per memory and the KV blocks they all get.
import { freemem, totalmem } from "node:os";

/** The largest 32-bit WebAssembly memory: 4 GiB. */
export const MAX_WASM_MEMORY_BYTES = 4 * 1024 ** 3;
/** WebAssembly page size: memory limits are whole pages. */
const PAGE_BYTES = 65536;

/** How the WebAssembly backend may spread a model over memories (tests force splits with these). */
export interface MemoryLimits {
  /** Largest WebAssembly memory to create, in bytes: a multiple of 64 KiB, at most (and by default) 4 GiB. */
  maxMemoryBytes?: number;
  /** Most transformer layers in one memory (default: as many as fit). */
  maxLayersPerMemory?: number;
}

/** One tensor to place: its name as in the model file and the bytes it takes resident (after any widening). */
export interface TensorSize {
  name: string;
  bytes: number;
}

/** What a plan is made from: sizes only, so that it can be made (and tested) before anything is read or allocated. */
export interface MemoryPlanInput {
  tensors: readonly TensorSize[];
  layerCount: number;
  /** The output matrix is token_embd.weight: the embedding then lives with the head (last memory). */
  tiedEmbedding: boolean;
  /** Bytes every memory needs whatever it holds: reserved low bytes, activation buffers, alignment, headroom. */
  memoryOverheadBytes: number;
  /** Extra bytes of the memory that computes logits (the logits buffer). */
  headBufferBytes: number;
  /** Extra bytes of the memory holding the tensors outside the layers (Gemma 4: where its per-layer inputs are computed). */
  preludeBufferBytes?: number;
  /** Extra bytes each layer adds to its memory's buffers (Gemma 4: its per-layer inputs). */
  layerBufferBytes?: number;
  /** Bytes of one KV block (K and V) of one layer. */
  kvBlockBytesPerLayer: number;
  /**
   * Where layers' KV differs in size (Gemma 4: head sizes by layer, shared-KV layers with none), each layer's bytes
   * of one KV block, in place of kvBlockBytesPerLayer.
   */
  kvBlockBytesOfLayer?: readonly number[];
  /**
   * Sliding-window layers whose KV is a fixed number of blocks (their window's slots), not the cache's block count;
   * absent: every layer holds kvBlocks.
   */
  windowLayers?: { layers: ReadonlySet<number>; kvBlocks: number };
  /** KV blocks one full context needs: the least the cache may have. */
  minimumKvBlocks: number;
  /** KV blocks the budget asks for: the most the cache gets. */
  budgetKvBlocks: number;
  /** Physical memory the process may still use, in bytes. */
  availableBytes: number;
  limits?: MemoryLimits;
}

/** One memory's share: a run of consecutive layers, and the embedding and head when they fall here. */
export interface MemoryGroupPlan {
  /**
   * The layers [firstLayer, firstLayer + layerCount) live here. layerCount is 0 for a memory that holds only the
   * embedding or the head (firstLayer is then the count of layers before it).
   */
  firstLayer: number;
  layerCount: number;
  /** Names of the tensors to load into this memory. */
  tensors: string[];
  /** Holds token_embd.weight: the embedding lookup runs here. */
  embedding: boolean;
  /** Holds output_norm and the output matrix: logits are computed here. */
  head: boolean;
  /** Bytes this memory grows to: tensors, its layers' KV cache, buffers, headroom. */
  bytes: number;
}

/** Where everything goes, and how many KV blocks every layer's cache holds. */
export interface MemoryPlan {
  groups: MemoryGroupPlan[];
  kvBlocks: number;
  /** The sliding-window layers with their fixed slots, as the input gave them. */
  windowLayers?: { layers: ReadonlySet<number>; kvBlocks: number };
  /** The largest memory any group may grow to (each runtime's maximum). */
  maxMemoryBytes: number;
  /** Sum of the groups' bytes: what the model takes in RAM. */
  totalBytes: number;
}

/** A model that cannot be placed: a part too large for one WebAssembly memory, or more than the machine has. */
export class ModelMemoryError extends Error {
  override readonly name = "ModelMemoryError";
  constructor(
    message: string,
    /** Bytes the failing part (or the whole model) needs. */
    readonly neededBytes: number,
    /** The limit it exceeds. */
    readonly limitBytes: number,
  ) {
    super(message);
  }
}

/** Bytes in round units for messages (e.g. "4.29 GB"); the exact counts travel in the error's fields. */
export function describeBytes(bytes: number): string {
  const units: Array<[number, string]> = [[1e9, "GB"], [1e6, "MB"], [1e3, "kB"]];
  const [scale, unit] = units.find(([s]) => bytes >= s) ?? [1, "bytes"];
  return scale === 1 ? `${bytes} bytes` : `${(bytes / scale).toFixed(scale === 1e9 ? 2 : 1)} ${unit}`;
}

/**
 * Physical memory this process can still take: the OS's available memory, and under a cgroup limit what the limit
 * leaves after this process's resident memory.
 */
export function availableMemoryBytes(): number {
  let available = freemem();
  const constrained = typeof process.constrainedMemory === "function" ? process.constrainedMemory() : 0;
  if (constrained > 0 && constrained < totalmem()) available = Math.min(available, constrained - process.memoryUsage.rss());
  return Math.max(0, available);
}

// A contiguous piece the packer keeps in one memory: the prelude (untied embedding, stray tensors), one layer, the head.
interface Part {
  label: string;
  tensors: string[];
  /** Tensors and buffers. */
  bytes: number;
  /** Of `bytes`, those of buffers (the head's logits, Gemma 4's per-layer inputs). */
  bufferBytes: number;
  /** The layer index, for layer parts (its KV cache scales with the block count). */
  layer?: number;
}

/**
 * Plans which memory holds what: consecutive layers per memory, the embedding with the first (or, tied, with the
 * head), the head with the last. Uses as few memories as hold the weights and one full context of KV, then gives the
 * KV cache as many blocks as those memories, the budget and the machine's memory allow (every layer the same count,
 * so the cache splits across memories in proportion to their layers).
 * @throws ModelMemoryError naming the bytes needed and the limit, before anything is allocated.
 */
export function planMemory(input: MemoryPlanInput): MemoryPlan {
  const maxMemoryBytes = input.limits?.maxMemoryBytes ?? MAX_WASM_MEMORY_BYTES;
  if (!Number.isInteger(maxMemoryBytes) || maxMemoryBytes % PAGE_BYTES !== 0 || maxMemoryBytes <= 0 || maxMemoryBytes > MAX_WASM_MEMORY_BYTES) {
    throw new RangeError(`maxMemoryBytes must be a positive multiple of ${PAGE_BYTES} of at most ${MAX_WASM_MEMORY_BYTES} (4 GiB), got ${maxMemoryBytes}`);
  }
  const maxLayers = input.limits?.maxLayersPerMemory ?? Infinity;
  if (maxLayers !== Infinity && (!Number.isInteger(maxLayers) || maxLayers < 1)) throw new RangeError(`maxLayersPerMemory must be a positive integer, got ${maxLayers}`);
  const parts = modelParts(input);
  const overhead = input.memoryOverheadBytes;
  const capacity = maxMemoryBytes - overhead;
  const limit = maxMemoryBytes === MAX_WASM_MEMORY_BYTES
    ? `the limit of one WebAssembly memory, 4 GiB (${maxMemoryBytes} bytes)`
    : `maxMemoryBytes, ${maxMemoryBytes} bytes (${describeBytes(maxMemoryBytes)})`;
  if (capacity <= 0) {
    throw new ModelMemoryError(
      `the activation buffers alone need ${overhead} bytes (${describeBytes(overhead)}) in every memory, more than ${limit}: lower batchSize, maxSequences or contextSize`,
      overhead, maxMemoryBytes);
  }
  const windowed = input.windowLayers;
  const layerKvBytes = (layer: number) => input.kvBlockBytesOfLayer?.[layer] ?? input.kvBlockBytesPerLayer;
  const cost = (part: Part, kvBlocks: number) => {
    if (part.layer === undefined) return part.bytes;
    return part.bytes + (windowed?.layers.has(part.layer) ? windowed.kvBlocks : kvBlocks) * layerKvBytes(part.layer);
  };

  const minimum = input.minimumKvBlocks;
  for (const part of parts) {
    const needed = overhead + cost(part, minimum);
    if (needed > maxMemoryBytes) {
      const kv = part.layer === undefined ? "" : `, KV cache for one full context ${describeBytes(minimum * layerKvBytes(part.layer))}`;
      throw new ModelMemoryError(
        `${part.label} needs ${needed} bytes (${describeBytes(needed)}: tensors ${describeBytes(part.bytes - part.bufferBytes)}${kv}, ` +
        `buffers ${describeBytes(overhead + part.bufferBytes)}) in one memory, more than ${limit}: ` +
        (part.layer === undefined ? "use a smaller quantization" : "lower contextSize, use an f16 KV cache or a smaller quantization"),
        needed, maxMemoryBytes);
    }
  }
  // Greedy packing of consecutive parts uses the fewest memories possible for a given cost per part.
  const fewest = pack(parts, (part) => cost(part, minimum), capacity, maxLayers);
  const layerIndices = Array.from({ length: input.layerCount }, (_, layer) => layer);
  const windowKvBytes = windowed ? [...windowed.layers].reduce((sum, layer) => sum + layerKvBytes(layer), 0) * windowed.kvBlocks : 0;
  const fixedBytes = fewest.length * input.memoryOverheadBytes + parts.reduce((sum, part) => sum + part.bytes, 0) + windowKvBytes;
  const kvBlockBytes = layerIndices.filter((layer) => !windowed?.layers.has(layer)).reduce((sum, layer) => sum + layerKvBytes(layer), 0);
  const leastBytes = fixedBytes + minimum * kvBlockBytes;
  if (leastBytes > input.availableBytes) {
    throw new ModelMemoryError(
      `the model needs at least ${leastBytes} bytes (${describeBytes(leastBytes)}: tensors and buffers ${describeBytes(fixedBytes)} in ` +
      `${fewest.length} WebAssembly ${fewest.length === 1 ? "memory" : "memories"}, KV cache for one full context ${describeBytes(minimum * kvBlockBytes)}), ` +
      `but only ${input.availableBytes} bytes (${describeBytes(input.availableBytes)}) of memory are available: free memory, lower contextSize or use a smaller quantization`,
      leastBytes, input.availableBytes);
  }

  // As many blocks as the budget and RAM allow while the same number of memories still holds everything (more
  // memories are never made for KV alone: a model that fits one memory keeps one, as before).
  const ramBlocks = kvBlockBytes > 0 ? Math.floor((input.availableBytes - fixedBytes) / kvBlockBytes) : Infinity;
  let low = minimum;
  let high = Math.max(minimum, Math.min(input.budgetKvBlocks, ramBlocks));
  const fits = (blocks: number) => parts.every((part) => cost(part, blocks) <= capacity) && pack(parts, (part) => cost(part, blocks), capacity, maxLayers).length <= fewest.length;
  while (low < high) {
    const middle = Math.floor((low + high + 1) / 2);
    if (fits(middle)) low = middle;
    else high = middle - 1;
  }
  const kvBlocks = low;
  let layersBefore = 0;
  const groups = pack(parts, (part) => cost(part, kvBlocks), capacity, maxLayers).map((run): MemoryGroupPlan => {
    const layerCount = run.filter((part) => part.layer !== undefined).length;
    layersBefore += layerCount;
    return {
      firstLayer: layersBefore - layerCount,
      layerCount,
      tensors: run.flatMap((part) => part.tensors),
      embedding: run.some((part) => part.tensors.includes("token_embd.weight")),
      head: run.includes(parts[parts.length - 1]),
      bytes: input.memoryOverheadBytes + run.reduce((sum, part) => sum + cost(part, kvBlocks), 0),
    };
  });
  return { groups, kvBlocks, windowLayers: windowed, maxMemoryBytes, totalBytes: groups.reduce((sum, group) => sum + group.bytes, 0) };
}

/** Splits `parts` in order into runs whose costs each fit `capacity`, starting a new run only when one is full. */
function pack(parts: readonly Part[], cost: (part: Part) => number, capacity: number, maxLayers: number): Part[][] {
  const runs: Part[][] = [];
  let run: Part[] = [];
  let bytes = 0;
  let layers = 0;
  for (const part of parts) {
    const c = cost(part);
    const layer = part.layer === undefined ? 0 : 1;
    if (run.length > 0 && (bytes + c > capacity || layers + layer > maxLayers)) {
      runs.push(run);
      run = [];
      bytes = 0;
      layers = 0;
    }
    run.push(part);
    bytes += c;
    layers += layer;
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/** The model in packing order: prelude (untied embedding and stray tensors), layer 0 .. n-1, head. */
function modelParts(input: MemoryPlanInput): Part[] {
  const preludeBuffers = input.preludeBufferBytes ?? 0;
  const layerBuffers = input.layerBufferBytes ?? 0;
  const prelude: Part = { label: "the tensors outside the layers", tensors: [], bytes: preludeBuffers, bufferBytes: preludeBuffers };
  const layers: Part[] = Array.from({ length: input.layerCount }, (_, layer) => ({ label: `layer ${layer}`, tensors: [], bytes: layerBuffers, bufferBytes: layerBuffers, layer }));
  const head: Part = { label: "the output head", tensors: [], bytes: input.headBufferBytes, bufferBytes: input.headBufferBytes };
  for (const tensor of input.tensors) {
    const layer = /^blk\.(\d+)\./.exec(tensor.name);
    let part: Part;
    if (layer) {
      part = layers[Number(layer[1])];
      if (!part) throw new RangeError(`tensor '${tensor.name}' names a layer beyond the model's ${input.layerCount}`);
    } else if (tensor.name === "output_norm.weight" || tensor.name === "output.weight" || (input.tiedEmbedding && tensor.name === "token_embd.weight")) {
      part = head;
    } else {
      part = prelude;
    }
    part.tensors.push(tensor.name);
    part.bytes += tensor.bytes;
  }
  if (prelude.tensors.includes("token_embd.weight")) prelude.label = "the token embedding";
  if (head.tensors.includes("token_embd.weight")) head.label = "the output head (with the tied token embedding)";
  return [prelude, ...layers, head];
}
