// Tests for downloading one file against a loopback HTTP server: the temporary name and the rename, progress,
// redirects, and every way a download fails (status, stall, a body cut short) leaving nothing behind.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { PARTIAL_SUFFIX, describeError, downloadFile } from "./download.js";

const folders: string[] = [];
const servers: Server[] = [];
afterEach(async () => {
  // Keep-alive connections from fetch would hold close() for seconds.
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => {
    server.close(resolve);
    server.closeAllConnections();
  })));
});
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** A fresh target path in a folder removed after the tests. */
function target(): string {
  const folder = mkdtempSync(join(tmpdir(), "loom-download-"));
  folders.push(folder);
  return join(folder, "model.safetensors");
}

/** Starts a loopback server with `handler`; resolves with its base URL. */
async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const BODY = Buffer.from(Array.from({ length: 64 * 1024 }, (_, i) => (i * 31) % 251));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `condition` holds (polling), or fails after two seconds. */
async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 2000) throw new Error("timed out waiting");
    await sleep(10);
  }
}

describe("downloadFile", () => {
  it("writes to a .partial name while bytes arrive and renames it once complete, reporting progress", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => { release = resolve; });
    const base = await serve(async (_request, response) => {
      response.writeHead(200, { "content-length": BODY.length });
      response.write(BODY.subarray(0, 1000));
      await released;
      response.end(BODY.subarray(1000));
    });
    const path = target();
    const progress: Array<[number, number | undefined]> = [];
    const done = downloadFile(`${base}/file`, path, { onProgress: (received, total) => progress.push([received, total]) });
    // The server holds the rest back: the first kilobyte is on disk under the temporary name only.
    await until(() => existsSync(`${path}${PARTIAL_SUFFIX}`) && readFileSync(`${path}${PARTIAL_SUFFIX}`).length === 1000);
    expect(existsSync(path)).toBe(false);
    release();
    await done;
    expect(readFileSync(path)).toEqual(BODY);
    expect(existsSync(`${path}${PARTIAL_SUFFIX}`)).toBe(false);
    expect(progress[0]).toEqual([0, BODY.length]);
    expect(progress.at(-1)).toEqual([BODY.length, BODY.length]);
    const counts = progress.map(([received]) => received);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
  });

  it("follows redirects (the Hub answers with one to its file store) and reports progress without a length", async () => {
    const base = await serve((request, response) => {
      if (request.url === "/resolve") {
        response.writeHead(302, { location: "/store/blob" });
        response.end();
      } else {
        response.writeHead(200); // chunked: no Content-Length
        response.end(BODY);
      }
    });
    const path = target();
    const totals = new Set<number | undefined>();
    await downloadFile(`${base}/resolve`, path, { onProgress: (_received, total) => totals.add(total) });
    expect(readFileSync(path)).toEqual(BODY);
    expect([...totals]).toEqual([undefined]);
  });

  it("finishes a slow but live download that takes longer than the stall limit", async () => {
    const base = await serve(async (_request, response) => {
      response.writeHead(200, { "content-length": 10 * 100 });
      for (let chunk = 0; chunk < 10; chunk++) {
        response.write(BODY.subarray(chunk * 100, (chunk + 1) * 100));
        await sleep(60);
      }
      response.end();
    });
    const path = target();
    await downloadFile(`${base}/slow`, path, { stallTimeoutMs: 300 }); // 600 ms in all, never 300 ms idle
    expect(readFileSync(path)).toEqual(BODY.subarray(0, 1000));
  });

  it("fails a download whose bytes stop arriving, and leaves nothing behind", async () => {
    const base = await serve((_request, response) => {
      response.writeHead(200, { "content-length": BODY.length });
      response.write(BODY.subarray(0, 1000)); // and nothing more
    });
    const path = target();
    await expect(downloadFile(`${base}/stalled`, path, { stallTimeoutMs: 200 })).rejects.toThrow(`GET ${base}/stalled: no data for 0.2 s`);
    expect(existsSync(path) || existsSync(`${path}${PARTIAL_SUFFIX}`)).toBe(false);
  });

  it("fails a response that never starts within the stall limit", async () => {
    const base = await serve(() => {}); // never answers
    await expect(downloadFile(`${base}/silent`, target(), { stallTimeoutMs: 200 })).rejects.toThrow(/no data for 0\.2 s/);
  });

  it("fails a body cut short, and leaves nothing behind", async () => {
    const base = await serve((_request, response) => {
      response.writeHead(200, { "content-length": BODY.length });
      response.write(BODY.subarray(0, 1000), () => response.socket?.destroy());
    });
    const path = target();
    await expect(downloadFile(`${base}/cut`, path)).rejects.toThrow(`GET ${base}/cut: `);
    expect(existsSync(path) || existsSync(`${path}${PARTIAL_SUFFIX}`)).toBe(false);
  });

  it("names the HTTP status of a refusal, and the cause of a failed connection", async () => {
    const base = await serve((_request, response) => {
      response.writeHead(404, "Not Found");
      response.end("no such file");
    });
    const path = target();
    await expect(downloadFile(`${base}/missing`, path)).rejects.toThrow(`GET ${base}/missing: HTTP 404 Not Found`);
    expect(existsSync(path) || existsSync(`${path}${PARTIAL_SUFFIX}`)).toBe(false);
    const closed = await serve(() => {});
    await new Promise((resolve) => servers.pop()!.close(resolve)); // nothing listens there now
    await expect(downloadFile(`${closed}/x`, path)).rejects.toThrow(/^GET http:\/\/127\.0\.0\.1:\d+\/x: fetch failed: connect ECONNREFUSED/);
  });
});

describe("describeError", () => {
  it("joins an error's causes, skipping repeats", () => {
    const inner = new Error("connect ECONNREFUSED 127.0.0.1:1");
    expect(describeError(new TypeError("fetch failed", { cause: inner }))).toBe("fetch failed: connect ECONNREFUSED 127.0.0.1:1");
    expect(describeError(new Error("same", { cause: new Error("same") }))).toBe("same");
    const wrapped = new Error("GET /x: fetch failed: bad port", { cause: new TypeError("fetch failed", { cause: new Error("bad port") }) });
    expect(describeError(wrapped)).toBe("GET /x: fetch failed: bad port");
    expect(describeError("text")).toBe("text");
  });
});
