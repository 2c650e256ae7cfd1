// The progress report the model writers send after each tensor.

/** Where a model write stands. */
export interface GenerationProgress {
  /** The tensor just written (its name in the output format). */
  tensorName: string;
  tensorsDone: number;
  tensorCount: number;
  /** Tensor bytes written so far and in all (headers and padding not counted). */
  bytesDone: number;
  totalBytes: number;
}

/** Receives progress reports. */
export type ProgressListener = (progress: GenerationProgress) => void;
