// The CPU compute runtime: one shared WebAssembly.Memory, the kernel module instantiated on the main thread and
// on worker threads over it, an arena allocator, and a low-latency dispatcher that splits a kernel's range
// across every thread (the main thread takes a share) through an Atomics control block. Several runtimes (one
// memory each, for data larger than one memory) can share one set of worker threads.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { performance } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import { Arena, PAGE_BYTES } from "./arena.js";
import {
  ACTIVE, ARGUMENTS_OFFSET, ARGUMENT_COUNT, CONTROL_BLOCK_BYTES, COUNT, EXIT_KERNEL, FAILED, GENERATION, GRAIN, KERNEL,
  MAX_ARGUMENTS, MAX_SHARES, MEMORY, MESSAGE_BYTES, MESSAGE_LENGTH, MESSAGE_OFFSET, SHARE_CLAIM, SLEEPERS, SPIN_MICROSECONDS, shareStart,
} from "./control-block.js";
import { WasmKernelError, WasmModuleMissingError } from "./errors.js";
import { activeKernelProfile } from "./kernel-profile.js";
import { type SimdLevel, kernelModulePath } from "./module-path.js";
import { relaxedSimdSupported } from "./relaxed-simd.js";
import { type WasmInstance, type WasmMemory, type WasmModule, webAssembly } from "./webassembly.js";

/** Bytes at the bottom of memory left to the module's static data; the arena starts above them. */
export const RESERVED_LOW_BYTES = 65536;
/** The largest 32-bit WebAssembly memory: 4 GiB. */
const MAX_MEMORY_BYTES = 65536 * PAGE_BYTES;

/** Options of WasmRuntime.create. */
export interface WasmRuntimeOptions {
  /** Threads that run kernels, the calling thread included (default: os.availableParallelism()). */
  threads?: number;
  /** Initial memory size in bytes (default 16 MiB; grows on demand). */
  initialBytes?: number;
  /** Maximum memory size in bytes (default and at most 4 GiB). */
  maximumBytes?: number;
  /** How long idle workers spin before sleeping, in microseconds (default 50). */
  spinMicroseconds?: number;
  /** Shares per thread a parallel() range is cut into, for balance when a core is busy (default 2). */
  sharesPerThread?: number;
  /**
   * Which build of the kernels to run: "relaxed" (relaxed SIMD's int8 dot products; an error where V8 cannot run
   * it), "plain" (128-bit SIMD only), or "auto" (default: relaxed where supported). Results are identical.
   */
  simd?: SimdLevel | "auto";
  /** A compiled kernel module to load instead (overrides `simd`'s choice of dist/wasm/kernels*.wasm). */
  modulePath?: string;
}

type Kernel = (...args: number[]) => unknown;

/** Worker threads and their control block, shared by the runtimes created together (one memory each). */
interface ThreadPool {
  workers: Worker[];
  control: SharedArrayBuffer;
  /** Runtimes not yet disposed: the last one to go stops the workers. */
  users: number;
  /** Why a worker stopped on its own, if one did: every later dispatch throws it. */
  failure?: string;
}

export { shareStart };
export type { SimdLevel };

/** The kernel build to load for a requested SIMD level. */
function chooseSimd(requested: SimdLevel | "auto"): SimdLevel {
  if (requested !== "auto" && requested !== "relaxed" && requested !== "plain") {
    throw new RangeError(`simd must be "auto", "relaxed" or "plain", got ${JSON.stringify(requested)}`);
  }
  if (requested === "plain") return "plain";
  if (relaxedSimdSupported()) return "relaxed";
  if (requested === "relaxed") throw new RangeError("simd: \"relaxed\" was asked for, but this V8 cannot run WebAssembly relaxed SIMD");
  return "plain";
}

/**
 * Runs WebAssembly kernels over one shared memory on `threads` threads.
 * Pointers are byte offsets into `memory`; allocate with alloc() and view with f32()/i32()/u8()/u16().
 */
export class WasmRuntime {
  /** Threads that run kernels, the calling thread included. */
  readonly threads: number;
  /** The shared memory every thread's instance uses. */
  readonly memory: WasmMemory;
  /** The function exports of the kernel module, in module order. */
  readonly kernelNames: readonly string[];
  /** Which build of the kernels runs: "relaxed" or "plain" SIMD (see WasmRuntimeOptions.simd). */
  readonly simd: SimdLevel;

  readonly #arena: Arena;
  readonly #kernels: Map<string, { index: number; fn: Kernel }>;
  readonly #pool: ThreadPool;
  /** Index of this runtime's memory among the pool's (what workers pick their instance by). */
  readonly #memoryIndex: number;
  readonly #workers: Worker[];
  readonly #ints: Int32Array;
  readonly #floats: Float64Array;
  readonly #message: Uint8Array;
  readonly #spinMilliseconds: number;
  readonly #sharesPerThread: number;
  #disposed = false;

  private constructor(memory: WasmMemory, instance: WasmInstance, kernelNames: string[], pool: ThreadPool, memoryIndex: number, maximumBytes: number, spinMicroseconds: number, sharesPerThread: number, simd: SimdLevel) {
    const { workers, control } = pool;
    this.memory = memory;
    this.simd = simd;
    this.kernelNames = kernelNames;
    this.threads = workers.length + 1;
    this.#pool = pool;
    this.#memoryIndex = memoryIndex;
    this.#workers = workers;
    this.#kernels = new Map(kernelNames.map((name, index) => [name, { index, fn: instance.exports[name] as Kernel }]));
    this.#arena = new Arena(memory, RESERVED_LOW_BYTES, maximumBytes);
    this.#ints = new Int32Array(control);
    this.#floats = new Float64Array(control);
    this.#message = new Uint8Array(control, MESSAGE_OFFSET, MESSAGE_BYTES);
    this.#spinMilliseconds = spinMicroseconds / 1000;
    this.#sharesPerThread = sharesPerThread;
  }

  /** Loads the kernel module, creates the shared memory and starts threads - 1 workers. */
  static async create(options: WasmRuntimeOptions = {}): Promise<WasmRuntime> {
    return (await WasmRuntime.createSharingThreads(1, options))[0];
  }

  /**
   * Creates `count` runtimes, each over its own memory (of `options.maximumBytes` at most), that share threads - 1
   * workers: each worker instantiates the module over every memory and runs a job in the memory of the runtime that
   * dispatched it. For data larger than one memory used one memory at a time (a model's layer groups): the threads
   * stay warm across memories and no more are started than one runtime would.
   * NOTE: dispatch from one runtime of the set at a time (the main thread's calls are synchronous, so they are).
   */
  static async createSharingThreads(count: number, options: WasmRuntimeOptions = {}): Promise<WasmRuntime[]> {
    if (!Number.isInteger(count) || count < 1) throw new RangeError(`count must be a positive integer, got ${count}`);
    const threads = options.threads ?? availableParallelism();
    if (!Number.isInteger(threads) || threads < 1) throw new RangeError(`threads must be a positive integer, got ${threads}`);
    const maximumBytes = options.maximumBytes ?? MAX_MEMORY_BYTES;
    const initialBytes = options.initialBytes ?? 16 * 1024 * 1024;
    if (maximumBytes % PAGE_BYTES !== 0 || maximumBytes > MAX_MEMORY_BYTES || maximumBytes <= RESERVED_LOW_BYTES) {
      throw new RangeError(`maximumBytes must be a multiple of ${PAGE_BYTES} above ${RESERVED_LOW_BYTES} and at most 4 GiB, got ${maximumBytes}`);
    }
    const spinMicroseconds = options.spinMicroseconds ?? 50;
    const sharesPerThread = options.sharesPerThread ?? 2;
    if (!Number.isInteger(sharesPerThread) || sharesPerThread < 1) throw new RangeError(`sharesPerThread must be a positive integer, got ${sharesPerThread}`);
    const simd = chooseSimd(options.simd ?? "auto");
    const modulePath = options.modulePath ?? kernelModulePath(simd);
    if (!existsSync(modulePath)) throw new WasmModuleMissingError(modulePath);
    const bytes = await readFile(modulePath);
    const module = await webAssembly.compile(bytes);
    const initialPages = Math.min(maximumBytes / PAGE_BYTES, Math.max(2, Math.ceil(initialBytes / PAGE_BYTES)));
    const memories = Array.from({ length: count }, () => new webAssembly.Memory({ initial: initialPages, maximum: maximumBytes / PAGE_BYTES, shared: true }));
    const instances = await Promise.all(memories.map((memory) => webAssembly.instantiate(module, { env: { memory } })));
    const kernelNames = webAssembly.Module.exports(module).filter((e) => e.kind === "function").map((e) => e.name);

    const workerCount = threads - 1;
    const control = new SharedArrayBuffer(CONTROL_BLOCK_BYTES);
    const ints = new Int32Array(control);
    ints[SPIN_MICROSECONDS] = spinMicroseconds;
    const workers = await Promise.all(
      Array.from({ length: workerCount }, (_, index) => startWorker({ module, memories, control, index, kernelNames })),
    );
    const pool: ThreadPool = { workers, control, users: count };
    workers.forEach((worker, index) => {
      worker.on("error", (error) => { pool.failure ??= `worker ${index + 1} crashed: ${describe(error)}`; });
      worker.on("exit", (code) => { if (pool.users > 0) pool.failure ??= `worker ${index + 1} exited with code ${code}`; });
    });
    return memories.map((memory, index) => new WasmRuntime(memory, instances[index], kernelNames, pool, index, maximumBytes, spinMicroseconds, sharesPerThread, simd));
  }

  /** Reserves `bytes` bytes aligned to `align` (a power of two), growing the memory; returns the byte offset. */
  alloc(bytes: number, align = 64): number {
    return this.#arena.alloc(bytes, align);
  }

  /** A mark to pass to release(), which frees everything allocated after it (for scratch buffers). */
  mark(): number {
    return this.#arena.mark();
  }

  /** Frees every allocation made since `mark` was taken. */
  release(mark: number): void {
    this.#arena.release(mark);
  }

  /** Bytes of memory handed out so far (including the reserved low bytes). */
  get usedBytes(): number {
    return this.#arena.top;
  }

  /** Bytes that can still be allocated before the memory reaches its maximum size. */
  get availableBytes(): number {
    return this.#arena.maximumBytes - this.#arena.top;
  }

  /** A Float32Array over `length` floats at byte offset `pointer` (valid after the memory grows). */
  f32(pointer: number, length: number): Float32Array {
    return new Float32Array(this.memory.buffer, pointer, length);
  }

  /** An Int32Array over `length` ints at byte offset `pointer`. */
  i32(pointer: number, length: number): Int32Array {
    return new Int32Array(this.memory.buffer, pointer, length);
  }

  /** A Uint16Array over `length` values at byte offset `pointer`. */
  u16(pointer: number, length: number): Uint16Array {
    return new Uint16Array(this.memory.buffer, pointer, length);
  }

  /** A Uint8Array over `length` bytes at byte offset `pointer`. */
  u8(pointer: number, length: number): Uint8Array {
    return new Uint8Array(this.memory.buffer, pointer, length);
  }

  /** Copies the bytes of `data` to byte offset `pointer`. */
  write(pointer: number, data: ArrayBufferView): void {
    this.u8(pointer, data.byteLength).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  }

  /** Allocates room for `data` (64-byte aligned), copies it there and returns its byte offset. */
  upload(data: ArrayBufferView): number {
    const pointer = this.alloc(data.byteLength);
    this.write(pointer, data);
    return pointer;
  }

  /** Runs `kernel` once on the calling thread with exactly these arguments. */
  call(kernel: string, ...args: number[]): void {
    const { fn } = this.#kernel(kernel);
    const profile = activeKernelProfile();
    const startedAt = profile === undefined ? 0 : performance.now();
    try {
      fn(...args);
    } catch (error) {
      throw new WasmKernelError(kernel, `main thread: ${describe(error)}`);
    }
    profile?.record(kernel, startedAt, 1, 1);
  }

  /**
   * Runs kernel(...args, start, end) over [0, count) split into contiguous shares (boundaries on multiples of
   * `grain`; sharesPerThread shares per thread) claimed by every thread, the calling thread included, and returns
   * when all are done. Shares left unclaimed by a sleeping or descheduled worker are run by the calling thread, so
   * a dispatch never waits for a worker to wake. A failure on any thread is thrown here as a WasmKernelError.
   */
  parallel(kernel: string, args: readonly number[], count: number, grain = 1): void {
    const { index, fn } = this.#kernel(kernel);
    if (args.length > MAX_ARGUMENTS) throw new RangeError(`${kernel}: at most ${MAX_ARGUMENTS} arguments, got ${args.length}`);
    if (!(grain >= 1) || !Number.isInteger(grain)) throw new RangeError(`${kernel}: grain must be a positive integer, got ${grain}`);
    if (count <= 0) return;
    const profile = activeKernelProfile();
    const startedAt = profile === undefined ? 0 : performance.now();
    const shares = Math.min(MAX_SHARES, this.threads * this.#sharesPerThread, Math.ceil(count / grain));
    if (shares === 1 || this.#workers.length === 0) {
      try {
        invoke(fn, args, 0, count);
      } catch (error) {
        throw new WasmKernelError(kernel, `main thread: ${describe(error)}`);
      }
      profile?.record(kernel, startedAt, 1, 1);
      return;
    }
    const ints = this.#ints;
    const floats = this.#floats;
    for (let i = 0; i < args.length; i++) floats[ARGUMENTS_OFFSET + i] = args[i];
    floats[COUNT] = count;
    floats[GRAIN] = grain;
    ints[MEMORY] = this.#memoryIndex;
    ints[KERNEL] = index;
    ints[ARGUMENT_COUNT] = args.length;
    Atomics.store(ints, SHARE_CLAIM, shares << 16); // publishes the job written above
    Atomics.add(ints, GENERATION, 1);
    if (Atomics.load(ints, SLEEPERS) > 0) Atomics.notify(ints, GENERATION);

    let mainError: unknown;
    let mainShares = 0;
    for (;;) {
      const share = Atomics.add(ints, SHARE_CLAIM, 1) & 0xffff;
      if (share >= shares) break;
      mainShares += 1;
      try {
        invoke(fn, args, shareStart(count, grain, shares, share), shareStart(count, grain, shares, share + 1));
      } catch (error) {
        mainError ??= error;
      }
    }
    this.#waitForWorkers();
    profile?.record(kernel, startedAt, shares, mainShares);
    if (mainError !== undefined || ints[FAILED] !== 0) {
      const problems: string[] = [];
      if (mainError !== undefined) problems.push(`main thread: ${describe(mainError)}`);
      if (ints[FAILED] !== 0) problems.push(new TextDecoder().decode(this.#message.slice(0, ints[MESSAGE_LENGTH])));
      ints[FAILED] = 0;
      throw new WasmKernelError(kernel, problems.join("; "));
    }
  }

  /** Stops the workers (once every runtime sharing them is disposed); the runtime cannot be used afterwards. */
  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    if (--this.#pool.users > 0) return;
    const ints = this.#ints;
    ints[KERNEL] = EXIT_KERNEL;
    Atomics.add(ints, GENERATION, 1);
    Atomics.notify(ints, GENERATION);
    await Promise.all(this.#workers.map((worker) => worker.terminate()));
  }

  #kernel(name: string): { index: number; fn: Kernel } {
    if (this.#disposed) throw new Error("WasmRuntime: used after dispose()");
    if (this.#pool.failure !== undefined) throw new WasmKernelError(name, this.#pool.failure);
    const kernel = this.#kernels.get(name);
    if (!kernel) throw new RangeError(`no kernel named "${name}" in the WebAssembly module (have: ${this.kernelNames.join(", ")})`);
    return kernel;
  }

  /** Waits until no worker is running a share: spins briefly, then sleeps until the last one notifies. */
  #waitForWorkers(): void {
    const ints = this.#ints;
    if (Atomics.load(ints, ACTIVE) === 0) return;
    const spinUntil = performance.now() + this.#spinMilliseconds;
    let spins = 0;
    while (Atomics.load(ints, ACTIVE) !== 0) {
      if ((++spins & 255) === 0 && performance.now() > spinUntil) {
        for (let active = Atomics.load(ints, ACTIVE); active !== 0; active = Atomics.load(ints, ACTIVE)) {
          Atomics.wait(ints, ACTIVE, active, 1000);
        }
        return;
      }
    }
  }
}

/** Calls fn(...args, start, end) without allocating for common arities. */
function invoke(fn: Kernel, a: readonly number[], start: number, end: number): void {
  switch (a.length) {
    case 0: fn(start, end); return;
    case 1: fn(a[0], start, end); return;
    case 2: fn(a[0], a[1], start, end); return;
    case 3: fn(a[0], a[1], a[2], start, end); return;
    case 4: fn(a[0], a[1], a[2], a[3], start, end); return;
    case 5: fn(a[0], a[1], a[2], a[3], a[4], start, end); return;
    case 6: fn(a[0], a[1], a[2], a[3], a[4], a[5], start, end); return;
    case 7: fn(a[0], a[1], a[2], a[3], a[4], a[5], a[6], start, end); return;
    case 8: fn(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], start, end); return;
    default: fn(...a, start, end);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

interface WorkerData {
  module: WasmModule;
  /** Every memory the worker serves, in the order of MEMORY's indices. */
  memories: WasmMemory[];
  control: SharedArrayBuffer;
  index: number;
  kernelNames: string[];
}

/** Starts one worker and resolves once it has instantiated the module. */
function startWorker(data: WorkerData): Promise<Worker> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./worker.js", import.meta.url), { workerData: data });
    const onError = (error: Error) => reject(new Error(`WebAssembly worker ${data.index + 1} failed to start: ${error.message}`));
    const onExit = (code: number) => reject(new Error(`WebAssembly worker ${data.index + 1} exited with code ${code} while starting`));
    worker.once("error", onError);
    worker.once("exit", onExit);
    worker.once("message", () => {
      worker.off("error", onError);
      worker.off("exit", onExit);
      worker.unref();
      resolve(worker);
    });
  });
}
