// The device buffers one owner (a model runner, a vision encoder) creates: sized to 16-byte multiples, storage
// buffers checked against the adapter's binding limit, uploads padded to whole words, all freed together.

/** Usage of an activation or weight buffer: bound as storage, written from the host, copied from. */
const STORAGE_USAGE = (): number => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;

/** Buffers created on one device and freed together. */
export class DeviceBuffers {
  private readonly owned: GPUBuffer[] = [];

  /**
   * @param maxBinding the adapter's maxStorageBufferBindingSize.
   * @param advice what the user can do about a storage buffer over it, ending the error's message.
   */
  constructor(private readonly device: GPUDevice, private readonly maxBinding: number, private readonly advice: string) {}

  /** A buffer of at least `bytes` (16 at least, a multiple of 16). @throws RangeError for a storage buffer over the binding limit. */
  create(label: string, bytes: number, usage = STORAGE_USAGE()): GPUBuffer {
    const size = Math.max(16, Math.ceil(bytes / 16) * 16);
    if (usage & GPUBufferUsage.STORAGE && size > this.maxBinding) {
      throw new RangeError(`${label} needs ${size} bytes, over this adapter's maxStorageBufferBindingSize of ${this.maxBinding}: ${this.advice}`);
    }
    return this.adopt(this.device.createBuffer({ label, size, usage }));
  }

  /** A storage buffer holding `bytes` (writeBuffer needs a multiple of 4 bytes: the tail is padded with zeros). */
  upload(label: string, bytes: ArrayBufferView): GPUBuffer {
    const buffer = this.create(label, bytes.byteLength);
    const view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const padded = view.byteLength % 4 === 0 ? view : Uint8Array.from({ length: Math.ceil(view.byteLength / 4) * 4 }, (_, i) => view[i] ?? 0);
    this.device.queue.writeBuffer(buffer, 0, padded);
    return buffer;
  }

  /** Takes a buffer created elsewhere into this set (freed with it). */
  adopt(buffer: GPUBuffer): GPUBuffer {
    this.owned.push(buffer);
    return buffer;
  }

  /** Frees one buffer now. */
  release(buffer: GPUBuffer): void {
    buffer.destroy();
    const at = this.owned.indexOf(buffer);
    if (at >= 0) this.owned.splice(at, 1);
  }

  /** Frees every buffer of the set. */
  destroyAll(): void {
    for (const buffer of this.owned) buffer.destroy();
    this.owned.length = 0;
  }
}
