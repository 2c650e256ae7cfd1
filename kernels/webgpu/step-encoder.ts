// Records one submission of compute dispatches: every dispatch's parameters go into one uniform buffer, written with
// a single queue write before the command buffer, each at its own 256-byte slot. A model step issues the same
// sequence of dispatches every time, so the bind group of slot i is cached and reused while it binds the same
// pipeline and buffers: no allocations per token once the shapes have been seen.

/** A uniform parameter: its WGSL scalar type and value, packed 4 bytes each in the shader's declaration order. */
export type DispatchParam = ["u32" | "i32" | "f32", number];

/** Uniform-buffer offsets must be multiples of 256 bytes. */
const SLOT_BYTES = 256;

interface CachedGroup {
  pipeline: GPUComputePipeline;
  buffers: readonly GPUBuffer[];
  group: GPUBindGroup;
}

interface Recorded {
  pipeline: GPUComputePipeline;
  group: GPUBindGroup;
  workgroups: readonly [number, number];
}

/** One submission being recorded (from {@link StepEncoder.begin}). */
export interface Step {
  /** Binds `buffers` in order from binding 0, the parameters right after them, and dispatches `workgroups`. */
  dispatch(pipeline: GPUComputePipeline, buffers: readonly GPUBuffer[], params: readonly DispatchParam[], workgroups: readonly [number, number]): void;
  /** Copies `bytes` from `source` to `target` (at byte offsets, multiples of 4) after the dispatches. */
  copy(source: GPUBuffer, target: GPUBuffer, bytes: number, sourceOffset?: number, targetOffset?: number): void;
  /** Writes the parameters and submits one command buffer. */
  submit(): void;
}

/** Encodes submissions of up to `maxDispatches` dispatches each. */
export class StepEncoder {
  /** The uniform buffer every dispatch's parameters live in. */
  readonly params: GPUBuffer;
  private readonly staging: ArrayBuffer;
  private readonly view: DataView;
  private readonly groups: Array<CachedGroup | undefined> = [];

  constructor(private readonly device: GPUDevice, private readonly maxDispatches: number) {
    this.params = device.createBuffer({ label: "dispatch parameters", size: maxDispatches * SLOT_BYTES, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    this.staging = new ArrayBuffer(maxDispatches * SLOT_BYTES);
    this.view = new DataView(this.staging);
  }

  begin(): Step {
    const recorded: Recorded[] = [];
    const copies: Array<[GPUBuffer, GPUBuffer, number, number, number]> = [];
    return {
      dispatch: (pipeline, buffers, params, workgroups) => {
        const slot = recorded.length;
        if (slot >= this.maxDispatches) throw new RangeError(`a step needs more than ${this.maxDispatches} dispatches`);
        params.forEach(([type, value], i) => {
          const offset = slot * SLOT_BYTES + i * 4;
          if (type === "f32") this.view.setFloat32(offset, value, true);
          else if (type === "i32") this.view.setInt32(offset, value, true);
          else this.view.setUint32(offset, value, true);
        });
        recorded.push({ pipeline, group: this.bindGroup(slot, pipeline, buffers), workgroups });
      },
      copy: (source, target, bytes, sourceOffset = 0, targetOffset = 0) => {
        copies.push([source, target, bytes, sourceOffset, targetOffset]);
      },
      submit: () => {
        if (recorded.length > 0) this.device.queue.writeBuffer(this.params, 0, this.staging, 0, recorded.length * SLOT_BYTES);
        const encoder = this.device.createCommandEncoder();
        const pass = encoder.beginComputePass();
        for (const { pipeline, group, workgroups } of recorded) {
          pass.setPipeline(pipeline);
          pass.setBindGroup(0, group);
          pass.dispatchWorkgroups(workgroups[0], workgroups[1]);
        }
        pass.end();
        for (const [source, target, bytes, sourceOffset, targetOffset] of copies) {
          encoder.copyBufferToBuffer(source, sourceOffset, target, targetOffset, Math.ceil(bytes / 4) * 4);
        }
        this.device.queue.submit([encoder.finish()]);
      },
    };
  }

  private bindGroup(slot: number, pipeline: GPUComputePipeline, buffers: readonly GPUBuffer[]): GPUBindGroup {
    const cached = this.groups[slot];
    if (cached && cached.pipeline === pipeline && cached.buffers.length === buffers.length && cached.buffers.every((b, i) => b === buffers[i])) return cached.group;
    const group = this.device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [
        ...buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
        { binding: buffers.length, resource: { buffer: this.params, offset: slot * SLOT_BYTES, size: SLOT_BYTES } },
      ],
    });
    this.groups[slot] = { pipeline, buffers: [...buffers], group };
    return group;
  }
}
