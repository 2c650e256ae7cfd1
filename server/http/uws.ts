// uWebSockets.js, loaded when a server starts rather than when the CLI loads: each npm build has binaries for some
// Node.js releases and glibc versions only (uws-builds.ts), so `loom serve` loads the one that fits this machine, or
// says what to change, while `loom generate` and the engine run on any release. Also: the timeouts set alike on
// every build.
import type { TemplatedApp } from "uWebSockets.js";
import { type UwsBuild, type UwsRuntime, chooseUwsBuild, currentRuntime } from "./uws-builds.js";

/** The uWebSockets.js module (every build loom uses has uws-pack's API; its types stand for all of them). */
export type Uws = typeof import("uWebSockets.js");

/** The most bytes of request headers a server serves, when the operator sets no UWS_HTTP_MAX_HEADERS_SIZE. */
export const MAX_REQUEST_HEADERS_BYTES = 16 * 1024;

/** The operator's UWS_HTTP_MAX_HEADERS_SIZE, read before loadUws sets its own. */
const operatorHeadersLimit = Number(process.env.UWS_HTTP_MAX_HEADERS_SIZE);

/**
 * The most bytes of header lines loom serves: the operator's UWS_HTTP_MAX_HEADERS_SIZE, else 16 KiB. Past it the
 * request is answered a 431 in the route's JSON error shape (framing.ts), as long as uWebSockets.js parsed it: uWS
 * answers headers past its own limit with a fixed HTML 431 that no handler sees, so loom gives it twice this limit
 * (an operator's own setting is both limits).
 */
export const REQUEST_HEADERS_LIMIT = Number.isSafeInteger(operatorHeadersLimit) && operatorHeadersLimit > 0 ? operatorHeadersLimit : MAX_REQUEST_HEADERS_BYTES;

/** The header bytes uWebSockets.js parses when the operator sets none: past loom's limit, so that loom answers. */
export const UWS_HEADERS_PARSE_BYTES = 2 * MAX_REQUEST_HEADERS_BYTES;

/** A loaded module and the build it came from. */
export interface LoadedUws {
  readonly uws: Uws;
  readonly build: UwsBuild;
}

/** No uWebSockets.js build loads here; the message names the Node.js version, the machine and what to change. */
export class UwsUnavailableError extends Error {
  override readonly name = "UwsUnavailableError";
}

/** For tests: a runtime other than this process's, and an import function standing in for `import()`. */
export interface LoadUwsOptions {
  readonly runtime?: UwsRuntime;
  readonly importModule?: (name: string) => Promise<unknown>;
}

let current: Promise<LoadedUws> | undefined;

/**
 * Loads the uWebSockets.js build for this Node.js release and machine (once; later calls share the result).
 * @throws UwsUnavailableError when no build has a binary that loads here, when the chosen build is not installed, or
 * when its binary fails to load; the message says which Node.js releases or system would work, or what to install.
 */
export function loadUws(options: LoadUwsOptions = {}): Promise<LoadedUws> {
  if (options.runtime !== undefined || options.importModule !== undefined) return load(options);
  current ??= load({});
  return current;
}

async function load({ runtime = currentRuntime(), importModule = (name: string) => import(name) }: LoadUwsOptions): Promise<LoadedUws> {
  const choice = chooseUwsBuild(runtime);
  if ("refusal" in choice) throw new UwsUnavailableError(choice.refusal);
  const { build } = choice;
  // uWS reads its request-header limit once, when it loads (default 4 KiB). x402 v2 payment headers carry the
  // payment and the offer's extensions back (about 3.5 KiB for a paid run), so 4 KiB would leave a client no room for
  // its other headers. 16 KiB is what common proxies allow, and loom serves that much (REQUEST_HEADERS_LIMIT); uWS
  // parses twice as much, so that up to there loom answers the excess in JSON. An operator's own setting wins.
  process.env.UWS_HTTP_MAX_HEADERS_SIZE ??= String(UWS_HEADERS_PARSE_BYTES);
  try {
    return { uws: (await importModule(build.module)) as Uws, build };
  } catch (error) {
    const message = String((error as Error)?.message ?? error);
    const where = `Node.js ${runtime.nodeVersion} (ABI ${runtime.abi}) on ${runtime.platform}-${runtime.arch}` +
      (runtime.glibc === undefined ? "" : ` with glibc ${runtime.glibc}`);
    if ((error as { code?: string })?.code === "ERR_MODULE_NOT_FOUND" && message.includes(build.module)) {
      throw new UwsUnavailableError(`the uWebSockets.js build for ${where} is ${build.package}, which is not installed: ${build.install}`, { cause: error });
    }
    // The builds' loaders put the dynamic linker's complaint on the last line.
    const cause = message.split("\n").filter((line) => line.trim() !== "").at(-1);
    throw new UwsUnavailableError(`${build.package} (uWebSockets.js ${build.release}) did not load on ${where}: ${cause}`, { cause: error });
  }
}

/** "uWebSockets.js v20.49 (uws-pack 20.0.8)": the build serving HTTP, for the start banner. */
export function describeUwsBuild(build: UwsBuild): string {
  return `uWebSockets.js ${build.release} (${build.package})`;
}

/**
 * How long a connection may sit with a request that stopped arriving, or idle between requests, before uWebSockets.js
 * closes it: uws-pack's fixed value (HTTP_IDLE_TIMEOUT_S), which the v20.57 build lets the app set.
 */
export const UWS_IDLE_TIMEOUT_SECONDS = 10;

/** The timeout setters the v20.57 build adds to an app (uws-pack has none). */
interface TimeoutSetters {
  setIdleTimeout?: (seconds: number) => unknown;
  setResponseTimeout?: (seconds: number) => unknown;
}

/**
 * Sets the build's request and keep-alive idle timeouts to {@link UWS_IDLE_TIMEOUT_SECONDS} where it can set them.
 * NOTE: the v20.57 build waits about 31 s by default where uws-pack waits 10, for a stalled request head or body
 * (slowloris) and for an idle keep-alive connection; a response the app has not sent yet is not timed by either.
 */
export function alignTimeouts(app: object): void {
  const setters = app as TimeoutSetters;
  if (typeof setters.setIdleTimeout === "function") setters.setIdleTimeout(UWS_IDLE_TIMEOUT_SECONDS);
  if (typeof setters.setResponseTimeout === "function") setters.setResponseTimeout(UWS_IDLE_TIMEOUT_SECONDS);
}

/**
 * Binds `app` to host:port (0: any free port); resolves with the bound port and a function that stops listening (a
 * second call does nothing).
 * @throws Error when the address cannot be bound.
 */
export function bindApp(uWS: Uws, app: TemplatedApp, host: string, port: number): Promise<{ port: number; close(): void }> {
  return new Promise((resolve, reject) => {
    app.listen(host, port, (token) => {
      if (!token) {
        reject(new Error(`could not listen on ${host}:${port} (address in use or not available)`));
        return;
      }
      let closed = false;
      // Idempotent: closing a listen socket twice crashes the process.
      const close = () => {
        if (closed) return;
        closed = true;
        uWS.us_listen_socket_close(token);
      };
      resolve({ port: uWS.us_socket_local_port(token), close });
    });
  });
}
