// Tensors the WebAssembly backend never makes resident: Gemma 4's per_layer_token_embd is [layers * n, vocab]
// (262144 rows of 35 x 256 values for E2B: 4.70 GB in F16, more than a WebAssembly memory holds), and a forward pass
// reads only its tokens' rows. As llama.cpp (TENSOR_READ_LAZY), each pass reads those rows from the file into a small
// staging area of the memory that uses them, where the get_rows kernels dequantize them as they would the whole tensor.
import type { ModelConfig } from "../../model/config.js";
import type { ModelSource } from "../../model/source.js";
import type { TensorRowReader } from "../../model/tensor-rows.js";
import type { WasmRuntime } from "../../../kernels/wasm/runtime.js";

/** Gemma 4's per-layer token embedding, read by rows. */
export const PER_LAYER_TOKEN_EMBD = "per_layer_token_embd.weight";

/** The tensors of a model read by rows from its file, never loaded whole (none but Gemma 4's with per-layer inputs). */
export function tensorsReadByRows(config: ModelConfig): ReadonlySet<string> {
  return new Set(config.architecture === "gemma4" && config.hidden_size_per_layer_input !== undefined ? [PER_LAYER_TOKEN_EMBD] : []);
}

/** `source` without the tensors `names`: what is loaded and planned into WebAssembly memory. */
export function residentPart(source: ModelSource, names: ReadonlySet<string>): ModelSource {
  if (names.size === 0) return source;
  const tensors = new Map([...source.tensors].filter(([name]) => !names.has(name)));
  return { ...source, tensors, totalTensorBytes: [...tensors.values()].reduce((sum, tensor) => sum + tensor.byteLength, 0) };
}

/**
 * Reads the rows of the `count` token ids at `idsPointer` from `reader` into `rowsPointer`, each distinct token once,
 * and writes at `stagedIdsPointer` each token's row among them: the ids a get_rows kernel then reads the staged rows
 * by. Needs room for `count` rows at `rowsPointer` (reader.rowBytes each) and `count` i32 at `stagedIdsPointer`.
 */
export function stageRows(runtime: WasmRuntime, reader: TensorRowReader, idsPointer: number, count: number, rowsPointer: number, stagedIdsPointer: number): void {
  const ids = runtime.i32(idsPointer, count);
  const staged = runtime.i32(stagedIdsPointer, count);
  const rowOf = new Map<number, number>();
  for (let t = 0; t < count; t++) {
    const token = ids[t]!;
    let row = rowOf.get(token);
    if (row === undefined) {
      row = rowOf.size;
      rowOf.set(token, row);
      reader.readRow(token, runtime.u8(rowsPointer + row * reader.rowBytes, reader.rowBytes));
    }
    staged[t] = row;
  }
}
