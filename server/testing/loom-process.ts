// `loom serve` as a user runs it, for tests: the compiled CLI in a child process, ready once it prints its port.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { REPOSITORY_ROOT } from "../../engine/testing/fixtures.js";

/** The compiled CLI (npm test builds it first). */
export const LOOM_CLI = join(REPOSITORY_ROOT, "dist", "server", "cli", "main.js");

/** A running `loom serve`. */
export interface LoomProcess {
  child: ChildProcess;
  port: number;
  /** `http://127.0.0.1:<port>`. */
  base: string;
  /** What it wrote on stderr so far (the start banner names the slugs). */
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
}

/**
 * Starts `loom serve <args>` and resolves once it prints `{"listening": ...}` on stdout; rejects with its stderr if it
 * exits first. `children` collects the process so that the test can stop it.
 */
export function startLoomServe(args: readonly string[], options: LoomProcessOptions = {}): Promise<LoomProcess> {
  return startLoom("serve", args, options);
}

/**
 * `loom serve --no-auth` as `npm start` runs it on a fresh machine: no model named, no keys, the model cache in
 * `cache` and the Hugging Face Hub at `hubEndpoint` (a closed port: offline). Resolves once it listens.
 */
export function startFirstRun(cache: string, hubEndpoint: string, children: ChildProcess[]): Promise<LoomProcess> {
  const env: NodeJS.ProcessEnv = { ...process.env, LOOM_CACHE_DIR: cache, HF_ENDPOINT: hubEndpoint };
  delete env.LOOM_MODEL;
  delete env.LOOM_API_KEYS;
  return startLoomServe(["--no-auth", "--port", "0", "--threads", "1"], { env, children });
}

/** How a test starts a loom process. */
export interface LoomProcessOptions {
  node?: string;
  /** Arguments to node before the CLI (a recorded process's execArgv). */
  nodeArgs?: readonly string[];
  /** The CLI to run (default: this repository's build, LOOM_CLI; an installed release's, cliOf(root)). */
  cli?: string;
  /** The working folder (default: the repository's root). */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  children?: ChildProcess[];
}

/** As startLoomServe for any command that prints `{"listening": ...}` once it listens (serve, gateway, worker). */
export function startLoom(command: "serve" | "gateway" | "worker", args: readonly string[], options: LoomProcessOptions = {}): Promise<LoomProcess> {
  const child = spawn(options.node ?? process.execPath, [...(options.nodeArgs ?? []), options.cli ?? LOOM_CLI, command, ...args], { cwd: options.cwd ?? REPOSITORY_ROOT, env: options.env ?? process.env });
  options.children?.push(child);
  let stderr = "";
  child.stderr!.on("data", (chunk) => { stderr += chunk; });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      let port: unknown;
      try {
        port = (JSON.parse(line) as { listening?: { port?: number } })?.listening?.port;
      } catch {
        return; // not the port line
      }
      if (typeof port === "number") resolve({ child, port, base: `http://127.0.0.1:${port}`, stderr: () => stderr, exited });
    });
    child.once("exit", (code, signal) => reject(Object.assign(new Error(`loom ${command} exited (${code ?? signal}): ${stderr}`), { code, stderr })));
  });
}

/** Stops a child with SIGTERM (a loom process commits usage and closes its database), SIGKILL if it takes over 10 s. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}
