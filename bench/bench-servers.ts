// Starting the servers the serving benchmarks compare, as their users start them: `loom serve --no-auth` and llama.cpp's
// `llama-server`, each on a free loopback port, healthy before the bench talks to it, stopped with SIGTERM.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import OpenAI from "openai";
import { REPOSITORY_ROOT } from "../engine/testing/fixtures.js";
import { closedLoopbackPort as freePort } from "../server/testing/closed-port.js";

/** A started server: its name, an `openai` client on its /v1, its base URL and how to stop it. */
export interface ServerHandle {
  name: string;
  client: OpenAI;
  /** http://127.0.0.1:PORT */
  baseUrl: string;
  stop: () => Promise<void>;
}

/** Starts `command`, waits until GET `healthUrl` answers 200 (120 s at most); its output is kept for errors. */
export async function startProcess(name: string, command: string, args: string[], healthUrl: string): Promise<{ child: ChildProcess; log: () => string }> {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout!.on("data", (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
  child.stderr!.on("data", (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with code ${child.exitCode}: ${log.slice(-1500)}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`${name} did not become healthy in 120 s: ${log.slice(-1500)}`);
    }
    const healthy = await fetch(healthUrl).then((response) => response.ok, () => false);
    if (healthy) return { child, log: () => log };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** SIGTERM, then SIGKILL after 10 s; resolves when the process has exited. */
export function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), 10_000).unref();
  });
}

function handle(name: string, port: number, child: ChildProcess): ServerHandle {
  const baseUrl = `http://127.0.0.1:${port}`;
  return { name, client: new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: "none", maxRetries: 0 }), baseUrl, stop: () => stopProcess(child) };
}

/**
 * `loom serve` as its users start it, with `context` positions per sequence: it batches every sequence its KV cache
 * holds, so there is no slot count to set.
 */
export async function startLoom(modelPath: string, threads: number, context: number): Promise<ServerHandle> {
  const port = await freePort();
  const main = join(REPOSITORY_ROOT, "dist", "server", "cli", "main.js");
  const { child } = await startProcess("loom serve", process.execPath, [main, "serve", "--model", modelPath, "--no-auth", "--port", String(port), "--threads", String(threads), "--context", String(context), "--drain-seconds", "0"], `http://127.0.0.1:${port}/health`);
  return handle("loom", port, child);
}

/**
 * llama-server with `slots` slots of `context` positions each; continuous batching and prompt caching are its
 * defaults. `extra`: more of its flags.
 */
export async function startLlamaServer(binary: string, modelPath: string, threads: number, slots: number, context: number, extra: string[] = []): Promise<ServerHandle> {
  const port = await freePort();
  const { child } = await startProcess("llama-server", binary, ["-m", modelPath, "-t", String(threads), "-tb", String(threads), "-np", String(slots), "-c", String(context * slots), "--port", String(port), "--host", "127.0.0.1", ...extra], `http://127.0.0.1:${port}/health`);
  return handle("llama-server", port, child);
}

/** An error with its chain of causes ("Connection error." alone does not say whether the server or the socket failed). */
export function describeFailure(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error; e !== undefined && e !== null && parts.length < 4; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    parts.push(`${String((e as Error).message ?? e)}${typeof code === "string" ? ` (${code})` : ""}`);
  }
  return parts.join(" <- ");
}
