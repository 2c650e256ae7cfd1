// Reads chosen rows of a matrix straight from its model file with positioned reads, for a tensor too large to keep
// resident that a forward pass reads a few rows of (Gemma 4's per_layer_token_embd, which llama.cpp marks
// TENSOR_READ_LAZY): only the rows asked for are ever in memory, in the type the file stores them in.
import { closeSync } from "node:fs";
import { firstNonFiniteScale } from "../../kernels/formats/block-scales.js";
import { BLOCK_LAYOUT, ggmlTypeName } from "../../kernels/formats/types.js";
import { ModelFileError } from "./errors.js";
import { openForReading, readFully } from "./file-io.js";
import type { TensorLocation } from "./source.js";

// The load-time scan of block scales reads the tensor in slices of this size, whatever its size.
const SCAN_SLICE_BYTES = 16 * 1024 * 1024;

/** Row-wise positioned reads of a 2-D tensor [width, rows] (GGML order) from its file. */
export class TensorRowReader {
  /** Bytes of one row in the file's type: whole blocks (the GGUF reader refuses rows that are not). */
  readonly rowBytes: number;
  /** Rows in the tensor (shape[1]). */
  readonly rows: number;
  // Opened on first read, so that a load that fails before any forward pass leaves no descriptor open.
  private fd: number | undefined;
  private closed = false;

  /** @throws ModelFileError naming the tensor when it is not 2-D or its bytes are not whole rows. */
  constructor(readonly tensor: TensorLocation) {
    const [width, rows] = tensor.shape;
    const { blockElements, blockBytes } = BLOCK_LAYOUT[tensor.type];
    if (tensor.shape.length !== 2 || width === undefined || rows === undefined || width % blockElements !== 0) {
      throw new ModelFileError(tensor.path, `tensor '${tensor.name}' (${ggmlTypeName(tensor.type)}, shape [${tensor.shape}]) cannot be read by rows`);
    }
    this.rows = rows;
    this.rowBytes = (width / blockElements) * blockBytes;
    if (this.rowBytes * rows !== tensor.byteLength) {
      throw new ModelFileError(tensor.path, `tensor '${tensor.name}' has ${tensor.byteLength} bytes, expected ${rows} rows of ${this.rowBytes}`);
    }
  }

  /** Reads row `row` into `target` (rowBytes long; it may view WebAssembly memory). */
  readRow(row: number, target: Uint8Array): void {
    if (!Number.isInteger(row) || row < 0 || row >= this.rows) throw new RangeError(`row ${row} is outside tensor '${this.tensor.name}' (${this.rows} rows)`);
    if (target.length !== this.rowBytes) throw new RangeError(`a row of '${this.tensor.name}' is ${this.rowBytes} bytes, the target ${target.length}`);
    if (this.closed) throw new Error(`the reader of tensor '${this.tensor.name}' is closed`);
    this.fd ??= openForReading(this.tensor.path);
    readFully(this.fd, this.tensor.path, target, this.tensor.fileOffset + row * this.rowBytes);
  }

  /**
   * Reads the whole tensor once, a slice at a time, and refuses it if a block has an infinite or NaN scale (a
   * corrupt file), as the loader refuses a resident tensor; nothing is kept. No read for the float types (no scales).
   * @throws ModelFileError naming the tensor and the block.
   */
  checkScales(): void {
    const { blockElements, blockBytes } = BLOCK_LAYOUT[this.tensor.type];
    if (blockElements === 1) return;
    const sliceBytes = Math.max(1, Math.floor(SCAN_SLICE_BYTES / blockBytes)) * blockBytes;
    const blocks = this.tensor.byteLength / blockBytes;
    const slice = new Uint8Array(Math.min(sliceBytes, this.tensor.byteLength));
    const fd = openForReading(this.tensor.path);
    try {
      for (let done = 0; done < this.tensor.byteLength; done += slice.length) {
        const part = slice.subarray(0, Math.min(slice.length, this.tensor.byteLength - done));
        readFully(fd, this.tensor.path, part, this.tensor.fileOffset + done);
        const bad = firstNonFiniteScale(this.tensor.type, part);
        if (bad === undefined) continue;
        const block = done / blockBytes + bad.block;
        throw new ModelFileError(this.tensor.path, `tensor '${this.tensor.name}' (${ggmlTypeName(this.tensor.type)}) has a non-finite scale (f16 bits 0x${bad.bits.toString(16).padStart(4, "0")}) in block ${block} of ${blocks}: the file is corrupt`);
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Closes the file; later reads throw. */
  close(): void {
    this.closed = true;
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
