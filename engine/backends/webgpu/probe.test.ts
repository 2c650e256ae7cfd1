// Tests for the quiet GPU probe behind `--backend auto`: device nodes, the child process, and silence on stderr.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { REPOSITORY_ROOT } from "../../testing/fixtures.js";
import { openGpu } from "../../../kernels/webgpu/gpu.js";
import { linuxGpuNodes, probeGpu } from "./probe.js";

const run = promisify(execFile);
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** A stand-in for /dev holding the given entries (a name with a slash makes its folder). */
function deviceDirectory(...entries: string[]): string {
  const folder = mkdtempSync(join(tmpdir(), "loom-dev-"));
  folders.push(folder);
  for (const entry of entries) {
    mkdirSync(join(folder, entry, ".."), { recursive: true });
    writeFileSync(join(folder, entry), "");
  }
  return folder;
}

// Some tests need a WebGPU adapter (lavapipe in CI): as in the other WebGPU tests, they fail without one under CI.
const opened = await openGpu();
if ("device" in opened) opened.device.destroy();
else if (process.env.CI !== "true") console.warn(`GPU probe tests that need an adapter skipped: ${opened.unavailable}`);
const adapter = "device" in opened || process.env.CI === "true";
/** The adapter Dawn opens in this process: the probe must find the same one. */
const expected = "device" in opened ? opened.adapter : undefined;

describe("linuxGpuNodes", () => {
  it("finds render nodes, NVIDIA's device nodes and WSL's /dev/dxg, and nothing else", () => {
    expect(linuxGpuNodes(deviceDirectory("null", "dri/card0", "nvidiactl", "nvidia-uvm"))).toEqual([]);
    expect(linuxGpuNodes(deviceDirectory("dri/renderD128", "dri/card0")).sort()).toEqual(["renderD128"]);
    expect(linuxGpuNodes(deviceDirectory("nvidia0", "nvidiactl", "dxg")).sort()).toEqual(["dxg", "nvidia0"]);
    expect(linuxGpuNodes(join(tmpdir(), "loom-no-such-folder"))).toEqual([]);
  });
});

describe.runIf(process.platform === "linux")("probeGpu", () => {
  it("answers at once, without loading Dawn, where Linux has no GPU device node", async () => {
    const started = performance.now();
    const probe = await probeGpu({ deviceDirectory: deviceDirectory("null") });
    expect(probe).toEqual({ hardware: false, reason: expect.stringMatching(/^no GPU device node/) });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it.runIf(adapter)("asks Dawn in a child process otherwise, and takes a CPU driver for no GPU", async () => {
    const probe = await probeGpu({ deviceDirectory: deviceDirectory("dri/renderD128") });
    expect(probe.adapter).toMatchObject({ description: expected?.description, software: expected?.software });
    expect(probe.hardware).toBe(!expected?.software);
    if (expected?.software) expect(probe.reason).toBe(`the only adapter is a CPU implementation (${expected.description})`);
  });

  it("reports a child that gives no answer in time", async () => {
    expect(await probeGpu({ deviceDirectory: deviceDirectory("dri/renderD128"), timeoutMs: 1 })).toEqual({ hardware: false, reason: "the GPU probe gave no answer within 0.001 s" });
  });
});

describe.runIf(process.platform === "linux" && adapter)("the probe's silence", () => {
  const PROBE = join(REPOSITORY_ROOT, "dist", "engine", "backends", "webgpu", "probe.js");
  const GPU = join(REPOSITORY_ROOT, "dist", "kernels", "webgpu", "gpu.js");
  const skip = !existsSync(PROBE) && process.env.CI !== "true"; // npm test builds first

  it.skipIf(skip)("leaves this process's stderr empty, where opening Dawn here prints its warnings", async () => {
    const fakeDev = deviceDirectory("dri/renderD128");
    const probed = await run(process.execPath, ["--input-type=module", "-e",
      `const { probeGpu } = await import(${JSON.stringify(PROBE)}); console.log(JSON.stringify(await probeGpu({ deviceDirectory: ${JSON.stringify(fakeDev)} })));`]);
    expect(JSON.parse(probed.stdout)).toMatchObject({ hardware: !expected?.software, adapter: { description: expected?.description } });
    expect(probed.stderr).toBe("");
    // What the probe keeps away from the user: Dawn's adapter warnings, printed from native code.
    const opened = await run(process.execPath, ["--input-type=module", "-e",
      `const { gpuUnavailable } = await import(${JSON.stringify(GPU)}); console.log(String(await gpuUnavailable()));`]);
    expect(opened.stderr).toMatch(/^Warning: maxDynamicUniformBuffersPerPipelineLayout artificially reduced/m);
  });
});
