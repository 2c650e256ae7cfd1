// Reference embedding lookup: the GGUF decoder applied to the selected rows.
import { BLOCK_LAYOUT, type GgmlType } from "../formats/types.js";
import { dequantize } from "../formats/quantize.js";

/** out[t] = dequantize(W[ids[t]]) for a [vocab, k] matrix of `type` given as raw bytes. */
export function getRowsRef(type: GgmlType, w: Uint8Array, ids: Int32Array, k: number): Float32Array {
  const { blockElements, blockBytes } = BLOCK_LAYOUT[type];
  const rowBytes = (k / blockElements) * blockBytes;
  const out = new Float32Array(ids.length * k);
  ids.forEach((id, t) => dequantize(type, w.subarray(id * rowBytes, (id + 1) * rowBytes), k, out.subarray(t * k, (t + 1) * k)));
  return out;
}
