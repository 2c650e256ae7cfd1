// Tests for downloading one file against a loopback HTTP server: the temporary name and the rename, progress,
// redirects, and every way a download fails (status, stall, a body cut short) leaving nothing behind.
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { DownloadError, DownloadVerificationError, PARTIAL_SUFFIX, describeError, downloadFile } from "./download.js";

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

/** Serves BODY with Range support (206 and Content-Range), recording each request's range header. */
function rangeServer(ranges: Array<string | undefined>, options: { ignoreRange?: boolean } = {}) {
  return (request: IncomingMessage, response: ServerResponse) => {
    ranges.push(request.headers.range);
    const match = /^bytes=(\d+)-$/.exec(request.headers.range ?? "");
    if (match && !options.ignoreRange) {
      const start = Number(match[1]);
      if (start >= BODY.length) {
        response.writeHead(416, { "content-range": `bytes */${BODY.length}` });
        response.end();
        return;
      }
      response.writeHead(206, { "content-length": BODY.length - start, "content-range": `bytes ${start}-${BODY.length - 1}/${BODY.length}` });
      response.end(BODY.subarray(start));
      return;
    }
    response.writeHead(200, { "content-length": BODY.length });
    response.end(BODY);
  };
}

const BODY_SHA256 = createHash("sha256").update(BODY).digest("hex");
const EXPECTED = { size: BODY.length, sha256: BODY_SHA256, source: "the test's metadata" };

describe("downloadFile, resuming and verifying", () => {
  it("sends the given headers", async () => {
    let authorization: string | undefined;
    const base = await serve((request, response) => {
      authorization = request.headers.authorization;
      response.end("ok");
    });
    await downloadFile(`${base}/f`, target(), { headers: { authorization: "Bearer hf_secret" } });
    expect(authorization).toBe("Bearer hf_secret");
  });

  it("keeps the .partial of a cut download with resume, and continues it from its last byte next time", async () => {
    let cut = true;
    const ranges: Array<string | undefined> = [];
    const resuming = rangeServer(ranges);
    const base = await serve((request, response) => {
      if (cut) {
        cut = false;
        ranges.push(request.headers.range);
        response.writeHead(200, { "content-length": BODY.length });
        // The connection drops a moment after the bytes: time for the client to write them down, as on a real cut.
        response.write(BODY.subarray(0, 20_000), () => setTimeout(() => response.socket?.destroy(), 200));
        return;
      }
      resuming(request, response);
    });
    const path = target();
    await expect(downloadFile(`${base}/f`, path, { resume: true, expected: EXPECTED })).rejects.toThrow(DownloadError);
    const kept = readFileSync(`${path}${PARTIAL_SUFFIX}`).length;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(BODY.length);
    const progress: number[] = [];
    await downloadFile(`${base}/f`, path, { resume: true, expected: EXPECTED, onProgress: (received) => progress.push(received) });
    expect(ranges).toEqual([undefined, `bytes=${kept}-`]);
    expect(progress[0]).toBe(kept);
    expect(readFileSync(path)).toEqual(BODY);
    expect(existsSync(`${path}${PARTIAL_SUFFIX}`)).toBe(false);
  });

  it("starts over when the server answers a Range request with the whole file, or with 416", async () => {
    const ranges: Array<string | undefined> = [];
    const base = await serve(rangeServer(ranges, { ignoreRange: true }));
    const path = target();
    writeFileSync(`${path}${PARTIAL_SUFFIX}`, Buffer.from("stale bytes of another file"));
    await downloadFile(`${base}/f`, path, { resume: true, expected: EXPECTED });
    expect(ranges).toEqual(["bytes=27-"]);
    expect(readFileSync(path)).toEqual(BODY);

    const ranges416: Array<string | undefined> = [];
    const base416 = await serve(rangeServer(ranges416));
    const other = target();
    writeFileSync(`${other}${PARTIAL_SUFFIX}`, Buffer.alloc(BODY.length + 10)); // longer than the file: not even asked
    await downloadFile(`${base416}/f`, other, { resume: true });
    expect(ranges416).toEqual([`bytes=${BODY.length + 10}-`, undefined]);
    expect(readFileSync(other)).toEqual(BODY);
  });

  it("refuses and deletes a download whose SHA-256 or size is not the expected one, resumed or not", async () => {
    const base = await serve(rangeServer([]));
    const path = target();
    const wrong = { ...EXPECTED, sha256: "0".repeat(64) };
    const failure = downloadFile(`${base}/f`, path, { resume: true, expected: wrong });
    await expect(failure).rejects.toThrow(DownloadVerificationError);
    await expect(failure).rejects.toThrow(`GET ${base}/f: SHA-256 ${BODY_SHA256} does not match ${"0".repeat(64)} from the test's metadata; the download was deleted`);
    expect(existsSync(path) || existsSync(`${path}${PARTIAL_SUFFIX}`)).toBe(false);

    // A partial whose bytes differ from the file's: the resumed whole fails its check, and nothing is kept.
    writeFileSync(`${path}${PARTIAL_SUFFIX}`, Buffer.alloc(1000, 7));
    await expect(downloadFile(`${base}/f`, path, { resume: true, expected: EXPECTED })).rejects.toThrow(/SHA-256 [0-9a-f]{64} does not match/);
    expect(existsSync(path) || existsSync(`${path}${PARTIAL_SUFFIX}`)).toBe(false);

    await expect(downloadFile(`${base}/f`, path, { expected: { ...EXPECTED, size: BODY.length - 1 } })).rejects.toThrow(`GET ${base}/f: the server sends ${BODY.length} bytes, the test's metadata says ${BODY.length - 1}`);
    expect(existsSync(path) || existsSync(`${path}${PARTIAL_SUFFIX}`)).toBe(false);
  });

  it("carries the HTTP status of a refusal, and keeps a resumable partial through it", async () => {
    const base = await serve((_request, response) => {
      response.writeHead(401, "Unauthorized");
      response.end();
    });
    const path = target();
    writeFileSync(`${path}${PARTIAL_SUFFIX}`, BODY.subarray(0, 100));
    const error = await downloadFile(`${base}/gated`, path, { resume: true }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(DownloadError);
    expect((error as DownloadError).status).toBe(401);
    expect(readFileSync(`${path}${PARTIAL_SUFFIX}`)).toEqual(BODY.subarray(0, 100));
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
