// The memory planner on model shapes given as sizes only: one memory when it fits, consecutive layers per memory when
// not, the KV cache shared out by layer, and errors that name the bytes needed and the limit.
import { describe, expect, it } from "vitest";
import { MAX_WASM_MEMORY_BYTES, type MemoryPlan, type MemoryPlanInput, ModelMemoryError, planMemory } from "./memory-plan.js";

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

interface Shape {
  layers: number;
  hidden: number;
  ffn: number;
  vocab: number;
  kvDim: number;
  /** Bytes per weight element (Q4_K_M averages about 0.57, Q8_0 1.0625). */
  bytesPerElement: number;
  tied?: boolean;
}

const LLAMA2_7B: Shape = { layers: 32, hidden: 4096, ffn: 11008, vocab: 32000, kvDim: 4096, bytesPerElement: 0.57 };

/** Tensor sizes of a Llama-shaped model, as the runner reports them. */
function tensors(shape: Shape): MemoryPlanInput["tensors"] {
  const matrix = (rows: number, columns: number) => Math.ceil(rows * columns * shape.bytesPerElement);
  const list = [{ name: "token_embd.weight", bytes: matrix(shape.vocab, shape.hidden) }];
  for (let i = 0; i < shape.layers; i++) {
    const p = `blk.${i}.`;
    list.push(
      { name: `${p}attn_norm.weight`, bytes: shape.hidden * 4 },
      { name: `${p}attn_q.weight`, bytes: matrix(shape.hidden, shape.hidden) },
      { name: `${p}attn_k.weight`, bytes: matrix(shape.hidden, shape.kvDim) },
      { name: `${p}attn_v.weight`, bytes: matrix(shape.hidden, shape.kvDim) },
      { name: `${p}attn_output.weight`, bytes: matrix(shape.hidden, shape.hidden) },
      { name: `${p}ffn_norm.weight`, bytes: shape.hidden * 4 },
      { name: `${p}ffn_gate.weight`, bytes: matrix(shape.hidden, shape.ffn) },
      { name: `${p}ffn_up.weight`, bytes: matrix(shape.hidden, shape.ffn) },
      { name: `${p}ffn_down.weight`, bytes: matrix(shape.ffn, shape.hidden) },
    );
  }
  list.push({ name: "output_norm.weight", bytes: shape.hidden * 4 });
  if (!shape.tied) list.push({ name: "output.weight", bytes: matrix(shape.vocab, shape.hidden) });
  return list;
}

/** A plan input for `shape` with a KV cache of `context` positions in 16-position blocks of f16. */
function input(shape: Shape, overrides: Partial<MemoryPlanInput> = {}, context = 4096): MemoryPlanInput {
  return {
    tensors: tensors(shape),
    layerCount: shape.layers,
    tiedEmbedding: shape.tied ?? false,
    memoryOverheadBytes: 150 * MiB,
    headBufferBytes: 32 * shape.vocab * 4,
    kvBlockBytesPerLayer: 2 * 16 * shape.kvDim * 2,
    minimumKvBlocks: context / 16,
    budgetKvBlocks: 1_000_000,
    availableBytes: 22 * GiB,
    ...overrides,
  };
}

/** Checks what every plan must hold: layers in order, each exactly once; every tensor once; each memory within its limit. */
function checkPlan(plan: MemoryPlan, source: MemoryPlanInput): void {
  let next = 0;
  for (const group of plan.groups) {
    if (group.layerCount > 0) expect(group.firstLayer).toBe(next);
    next += group.layerCount;
    expect(group.bytes).toBeLessThanOrEqual(plan.maxMemoryBytes);
  }
  expect(next).toBe(source.layerCount);
  expect(plan.groups.flatMap((group) => group.tensors).sort()).toEqual(source.tensors.map((t) => t.name).sort());
  expect(plan.groups.filter((group) => group.embedding)).toHaveLength(1);
  expect(plan.groups.filter((group) => group.head)).toEqual([plan.groups[plan.groups.length - 1]]);
  expect(plan.totalBytes).toBe(plan.groups.reduce((sum, group) => sum + group.bytes, 0));
  expect(plan.kvBlocks).toBeGreaterThanOrEqual(source.minimumKvBlocks);
  expect(plan.kvBlocks).toBeLessThanOrEqual(source.budgetKvBlocks);
}

describe("planMemory", () => {
  it("keeps a model that fits in one memory, with the KV cache the budget asks for", () => {
    const small: Shape = { layers: 16, hidden: 2048, ffn: 8192, vocab: 128256, kvDim: 512, bytesPerElement: 1.0625, tied: true };
    const source = input(small, { budgetKvBlocks: 2000 });
    const plan = planMemory(source);
    checkPlan(plan, source);
    expect(plan.groups).toHaveLength(1);
    expect(plan.groups[0]).toMatchObject({ firstLayer: 0, layerCount: 16, embedding: true, head: true });
    expect(plan.kvBlocks).toBe(2000);
    expect(plan.maxMemoryBytes).toBe(MAX_WASM_MEMORY_BYTES);
  });

  it("splits a 7B-shape Q4_K_M model (about 4.1 GB) into two memories of consecutive layers", () => {
    const source = input(LLAMA2_7B);
    const plan = planMemory(source);
    checkPlan(plan, source);
    expect(plan.groups).toHaveLength(2);
    expect(plan.groups[0]).toMatchObject({ firstLayer: 0, embedding: true, head: false });
    expect(plan.groups[1]).toMatchObject({ embedding: false, head: true });
    expect(plan.groups[0].tensors).toContain("token_embd.weight");
    expect(plan.groups[1].tensors).toEqual(expect.arrayContaining(["output_norm.weight", "output.weight", "blk.31.ffn_down.weight"]));
    // Two memories hold more than one full context: the cache takes the room they have.
    expect(plan.kvBlocks).toBeGreaterThan(source.minimumKvBlocks);
  });

  it("gives every layer the same KV blocks, as many as the fullest memory allows, and no more than the budget", () => {
    const source = input(LLAMA2_7B);
    const plan = planMemory(source);
    const tensorBytes = new Map(source.tensors.map((t) => [t.name, t.bytes]));
    // One block more would overflow some memory of the same plan.
    const over = plan.groups.some((group) => {
      const tensorsBytes = group.tensors.reduce((sum, name) => sum + tensorBytes.get(name)!, 0);
      const buffers = source.memoryOverheadBytes + (group.head ? source.headBufferBytes : 0);
      return buffers + tensorsBytes + group.layerCount * (plan.kvBlocks + 1) * source.kvBlockBytesPerLayer > MAX_WASM_MEMORY_BYTES;
    });
    expect(over).toBe(true);
    expect(planMemory({ ...source, budgetKvBlocks: 300 }).kvBlocks).toBe(300);
  });

  it("caps the KV cache by the machine's available memory", () => {
    const source = input(LLAMA2_7B, { availableBytes: 6 * GiB });
    const plan = planMemory(source);
    checkPlan(plan, source);
    expect(plan.totalBytes).toBeLessThanOrEqual(6 * GiB);
    expect(plan.totalBytes + LLAMA2_7B.layers * source.kvBlockBytesPerLayer).toBeGreaterThan(6 * GiB);
  });

  it("puts a tied embedding with the head, where the logits use it", () => {
    const source = input({ ...LLAMA2_7B, tied: true });
    const plan = planMemory(source);
    checkPlan(plan, source);
    expect(plan.groups[0].embedding).toBe(false);
    expect(plan.groups[plan.groups.length - 1]).toMatchObject({ embedding: true, head: true });
  });

  it("forces splits with maxLayersPerMemory and maxMemoryBytes", () => {
    const tiny: Shape = { layers: 3, hidden: 128, ffn: 352, vocab: 32000, kvDim: 64, bytesPerElement: 4 };
    const source = input(tiny, { memoryOverheadBytes: 4 * MiB, limits: { maxLayersPerMemory: 1 } }, 512);
    const plan = planMemory(source);
    checkPlan(plan, source);
    expect(plan.groups.map((g) => [g.firstLayer, g.layerCount, g.embedding, g.head])).toEqual([[0, 1, true, false], [1, 1, false, false], [2, 1, false, true]]);

    // A memory just big enough for the embedding and the layers leaves the head a memory of its own.
    const embedding = 32000 * 128 * 4;
    const bytes = planMemory(input(tiny, { memoryOverheadBytes: 4 * MiB, budgetKvBlocks: 32, limits: { maxMemoryBytes: 4 * MiB + embedding + 8 * MiB } }, 512));
    expect(bytes.groups.map((g) => [g.firstLayer, g.layerCount, g.embedding, g.head])).toEqual([[0, 3, true, false], [3, 0, false, true]]);
    expect(bytes.maxMemoryBytes).toBe(4 * MiB + embedding + 8 * MiB);

    // Memories that hold the embedding and nothing else: embedding, layers, head each in their own.
    const page = 65536;
    const alone = planMemory(input(tiny, { memoryOverheadBytes: 4 * MiB, headBufferBytes: 0, budgetKvBlocks: 32, limits: { maxMemoryBytes: 4 * MiB + Math.ceil(embedding / page + 1) * page } }, 512));
    expect(alone.groups.map((g) => [g.firstLayer, g.layerCount, g.embedding, g.head])).toEqual([[0, 0, true, false], [0, 3, false, false], [3, 0, false, true]]);
  });

  it("counts each layer's buffers in its memory and the prelude's in the first (Gemma 4's per-layer inputs)", () => {
    const tiny: Shape = { layers: 3, hidden: 128, ffn: 352, vocab: 32000, kvDim: 64, bytesPerElement: 4 };
    const base = input(tiny, { memoryOverheadBytes: 4 * MiB, budgetKvBlocks: 32, limits: { maxLayersPerMemory: 2 } }, 512);
    const plain = planMemory(base);
    const withBuffers = planMemory({ ...base, preludeBufferBytes: 5 * MiB, layerBufferBytes: MiB });
    expect(withBuffers.groups.map((g) => [g.firstLayer, g.layerCount])).toEqual(plain.groups.map((g) => [g.firstLayer, g.layerCount]));
    expect(withBuffers.groups.map((g, i) => g.bytes - plain.groups[i]!.bytes)).toEqual([5 * MiB + 2 * MiB, MiB]);
    // They count against a memory's room like tensors: too many for one memory, the part is refused naming them.
    expect(() => planMemory({ ...base, layerBufferBytes: 4 * GiB })).toThrow(/^layer 0 needs \d+ bytes .*buffers 4\.30 GB\)/);
  });

  it("refuses, before anything is allocated, a layer larger than one memory, naming its bytes and the 4 GiB limit", () => {
    const huge: Shape = { layers: 2, hidden: 16384, ffn: 53248, vocab: 32000, kvDim: 16384, bytesPerElement: 2 };
    let error: unknown;
    try {
      planMemory(input(huge));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ModelMemoryError);
    const { neededBytes, limitBytes, message } = error as ModelMemoryError;
    expect(limitBytes).toBe(4 * GiB);
    expect(neededBytes).toBeGreaterThan(4 * GiB);
    expect(message).toMatch(/^layer 0 needs (\d+) bytes \(.*KV cache for one full context .*\) in one memory, more than the limit of one WebAssembly memory, 4 GiB \(4294967296 bytes\)/);
    expect(message).toContain(String(neededBytes));
  });

  it("refuses a model larger than the machine's available memory, naming both sizes", () => {
    const f32: Shape = { ...LLAMA2_7B, bytesPerElement: 4 }; // a 7B widened to F32: about 27 GB
    expect(() => planMemory(input(f32, { availableBytes: 22 * GiB }))).toThrow(
      /^the model needs at least (\d+) bytes \(\d\d\.\d\d GB: tensors and buffers .* in 8 WebAssembly memories, .*\), but only 23622320128 bytes \(23\.62 GB\) of memory are available/,
    );
  });

  it("refuses buffers that leave no room, and limits that are not whole pages", () => {
    expect(() => planMemory(input(LLAMA2_7B, { memoryOverheadBytes: 5 * GiB }))).toThrow(/activation buffers alone need 5368709120 bytes .* more than the limit of one WebAssembly memory/);
    expect(() => planMemory(input(LLAMA2_7B, { limits: { maxMemoryBytes: 1000 } }))).toThrow(RangeError);
    expect(() => planMemory(input(LLAMA2_7B, { limits: { maxMemoryBytes: 8 * GiB } }))).toThrow(/at most 4294967296/);
    expect(() => planMemory(input(LLAMA2_7B, { limits: { maxLayersPerMemory: 0 } }))).toThrow(/maxLayersPerMemory/);
  });
});
