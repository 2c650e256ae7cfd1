// safeRequest against servers in this process on 127.0.0.1: what the policy refuses (loopback, private, link-local,
// IPv4-mapped and odd IPv4 spellings, a redirect to any of them), what it allows, and the time and size bounds.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NetworkPolicy, refuseAddress } from "./network-policy.js";
import { SafeHttpError, type SafeRequest, safeRequest } from "./safe-http.js";

const LIMITS = { timeoutMs: 5_000, maxBytes: 1024 * 1024 };
const LOOPBACK_ALLOWED = { allowHosts: ["127.0.0.1"] };

/** The SafeHttpError a request fails with. */
async function failure(request: Partial<SafeRequest> & Pick<SafeRequest, "url">): Promise<SafeHttpError> {
  const error = await safeRequest({ ...LIMITS, policy: {}, ...request }).then(() => undefined, (e: unknown) => e);
  expect(error, String(request.url)).toBeInstanceOf(SafeHttpError);
  return error as SafeHttpError;
}

describe("the network policy", () => {
  it("passes public unicast addresses only", () => {
    expect(refuseAddress("93.184.215.14")).toBeUndefined();
    expect(refuseAddress("2606:4700::1111")).toBeUndefined();
    const ranges = ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "255.255.255.255",
      "224.0.0.1", "240.0.0.1", "::1", "::", "fe80::1", "fd00::1", "ff02::1", "::ffff:10.0.0.1", "::7f00:1", "64:ff9b::a00:1"]
      .map((address) => [address, refuseAddress(address)?.range]);
    expect(Object.fromEntries(ranges)).toEqual({
      "127.0.0.1": "loopback", "10.1.2.3": "private", "172.16.0.1": "private", "192.168.1.1": "private", "169.254.169.254": "linkLocal",
      "100.64.0.1": "carrierGradeNat", "0.0.0.0": "unspecified", "255.255.255.255": "broadcast", "224.0.0.1": "multicast", "240.0.0.1": "reserved",
      "::1": "loopback", "::": "unspecified", "fe80::1": "linkLocal", "fd00::1": "uniqueLocal", "ff02::1": "multicast",
      // IPv4-mapped: judged as the IPv4 address it carries; IPv4-compatible and NAT64 are not global unicast.
      "::ffff:10.0.0.1": "private", "::7f00:1": "nonGlobalIPv6", "64:ff9b::a00:1": "rfc6052",
    });
  });
});

describe("safeRequest", () => {
  let server: Server;
  let base: string;
  let port: number;
  const handlers = new Map<string, (request: IncomingMessage, response: ServerResponse) => void>();
  beforeAll(async () => {
    server = createServer((request, response) => {
      const handler = handlers.get(new URL(request.url ?? "/", "http://x").pathname);
      if (handler) handler(request, response);
      else response.writeHead(404).end("not here");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
    handlers.set("/page", (_request, response) => response.writeHead(200, { "content-type": "text/plain" }).end("hello from loopback"));
    handlers.set("/echo", (request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => response.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({
        method: request.method, body: Buffer.concat(chunks).toString(), signature: request.headers["webhook-signature"] ?? null,
        authorization: request.headers.authorization ?? null,
      })));
    });
    handlers.set("/big", (_request, response) => response.writeHead(200).end("x".repeat(10_000)));
    handlers.set("/gzip", (_request, response) => response.writeHead(200, { "content-encoding": "gzip" }).end(gzipSync("y".repeat(50_000))));
    handlers.set("/silent", () => {}); // never answers
    handlers.set("/trickle", (_request, response) => {
      response.writeHead(200);
      const timer = setInterval(() => response.write("."), 50);
      response.on("close", () => clearInterval(timer));
    });
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("refuses loopback, private and link-local addresses, in every spelling, before connecting", async () => {
    const cases: Array<[string, RegExp]> = [
      [`${base}/page`, /refused: 127\.0\.0\.1 is a loopback address; allow it with the network policy's allowPrivate, or allowHosts: \["127\.0\.0\.1"\]/],
      [`http://localhost:${port}/page`, /refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address/],
      ["http://10.0.0.1/", /refused: 10\.0\.0\.1 is a private address/],
      ["http://192.168.1.1/", /refused: 192\.168\.1\.1 is a private address/],
      ["http://169.254.169.254/latest/meta-data/", /refused: 169\.254\.169\.254 is a link-local address/],
      [`http://[::1]:${port}/`, /refused: ::1 is a loopback address/],
      [`http://[::ffff:127.0.0.1]:${port}/`, /refused: 127\.0\.0\.1 is a loopback address/],
      [`http://2130706433:${port}/`, /refused: 127\.0\.0\.1 is a loopback address/], // decimal: WHATWG URL makes it 127.0.0.1
      [`http://0x7f.1:${port}/`, /refused: 127\.0\.0\.1 is a loopback address/], // hex and short forms too
      ["http://0/", /refused: 0\.0\.0\.0 is an unspecified address/],
      [`http://[::127.0.0.1]:${port}/`, /refused: ::7f00:1 is an IPv6 address outside global unicast/], // IPv4-compatible
    ];
    for (const [url, message] of cases) {
      const error = await failure({ url });
      expect(error.code, url).toBe("refused");
      expect(error.message, url).toMatch(message);
    }
    expect((await failure({ url: "file:///etc/passwd" })).message).toMatch(/refused: file: URLs are not fetched, only http: and https:/);
    expect((await failure({ url: "not a url" })).code).toBe("invalid_url");
  });

  it("reads a page on loopback only when the policy allows it", async () => {
    for (const policy of [{ allowPrivate: true }, LOOPBACK_ALLOWED, { allowHosts: ["LOCALHOST"] }] as NetworkPolicy[]) {
      const url = policy.allowHosts?.[0] === "LOCALHOST" ? `http://localhost:${port}/page` : `${base}/page`;
      const response = await safeRequest({ url, policy, ...LIMITS });
      expect(response.status).toBe(200);
      expect(response.body.toString()).toBe("hello from loopback");
      expect(response.truncated).toBe(false);
      expect(response.url).toBe(url);
    }
    expect((await failure({ url: `${base}/page`, policy: { allowHosts: ["127.0.0.2"] } })).code).toBe("refused");
  });

  it("re-checks every redirect hop: an allowed host cannot redirect to a refused one", async () => {
    handlers.set("/to-localhost", (_request, response) => response.writeHead(302, { location: `http://localhost:${port}/page` }).end());
    handlers.set("/to-metadata", (_request, response) => response.writeHead(307, { location: "http://169.254.169.254/latest/meta-data/" }).end());
    handlers.set("/to-decimal", (_request, response) => response.writeHead(301, { location: `http://2130706434:${port}/page` }).end());
    expect((await failure({ url: `${base}/to-localhost`, policy: LOOPBACK_ALLOWED })).message).toMatch(/refused: localhost resolves to/);
    expect((await failure({ url: `${base}/to-metadata`, policy: LOOPBACK_ALLOWED })).message).toMatch(/refused: 169\.254\.169\.254 is a link-local address/);
    const decimal = await failure({ url: `${base}/to-decimal`, policy: LOOPBACK_ALLOWED });
    expect(decimal.message).toMatch(/refused: 127\.0\.0\.2 is a loopback address/);
    expect(decimal.url).toBe(`http://127.0.0.2:${port}/page`);
  });

  it("follows redirects within the limit, turning a POST into a GET on 303 and dropping credentials across origins", async () => {
    handlers.set("/relative", (_request, response) => response.writeHead(302, { location: "/page" }).end());
    handlers.set("/see-other", (_request, response) => response.writeHead(303, { location: "/echo" }).end());
    handlers.set("/temporary", (_request, response) => response.writeHead(307, { location: "/echo" }).end());
    handlers.set("/other-origin", (_request, response) => response.writeHead(307, { location: `http://localhost:${port}/echo` }).end());
    handlers.set("/loop", (_request, response) => response.writeHead(302, { location: "/loop" }).end());
    const relative = await safeRequest({ url: `${base}/relative`, policy: LOOPBACK_ALLOWED, ...LIMITS });
    expect([relative.status, relative.url, relative.body.toString()]).toEqual([200, `${base}/page`, "hello from loopback"]);
    const post = { method: "POST", body: "payload", headers: { authorization: "Bearer secret" }, policy: { allowPrivate: true }, ...LIMITS };
    expect(JSON.parse((await safeRequest({ url: `${base}/see-other`, ...post })).body.toString())).toMatchObject({ method: "GET", body: "" });
    expect(JSON.parse((await safeRequest({ url: `${base}/temporary`, ...post })).body.toString())).toMatchObject({ method: "POST", body: "payload", authorization: "Bearer secret" });
    expect(JSON.parse((await safeRequest({ url: `${base}/other-origin`, ...post })).body.toString())).toMatchObject({ method: "POST", body: "payload", authorization: null });
    const loop = await failure({ url: `${base}/loop`, policy: LOOPBACK_ALLOWED, maxRedirects: 3 });
    expect([loop.code, loop.message]).toEqual(["too_many_redirects", `${base}/loop redirected more than 3 times`]);
    // maxRedirects 0: the redirect is the answer (a webhook sender records it).
    const unfollowed = await safeRequest({ url: `${base}/relative`, policy: LOOPBACK_ALLOWED, maxRedirects: 0, ...LIMITS });
    expect([unfollowed.status, unfollowed.headers.location]).toEqual([302, "/page"]);
  });

  it("sends a POST with its body and headers (a webhook)", async () => {
    const response = await safeRequest({
      url: `${base}/echo`, method: "POST", body: Buffer.from('{"run":"run_1"}'), headers: { "Content-Type": "application/json", "Webhook-Signature": "v1,abc" },
      policy: LOOPBACK_ALLOWED, ...LIMITS, maxRedirects: 0,
    });
    expect(response.status).toBe(201);
    expect(JSON.parse(response.body.toString())).toEqual({ method: "POST", body: '{"run":"run_1"}', signature: "v1,abc", authorization: null });
  });

  it("caps the body: fails, or keeps the first maxBytes, decompressed bytes included", async () => {
    const refused = await failure({ url: `${base}/big`, policy: LOOPBACK_ALLOWED, maxBytes: 1000 });
    expect([refused.code, refused.message]).toEqual(["too_large", `the body of ${base}/big is larger than 1000 bytes`]);
    const cut = await safeRequest({ url: `${base}/big`, policy: LOOPBACK_ALLOWED, ...LIMITS, maxBytes: 1000, overflow: "truncate" });
    expect([cut.body.length, cut.truncated]).toEqual([1000, true]);
    const unzipped = await safeRequest({ url: `${base}/gzip`, policy: LOOPBACK_ALLOWED, ...LIMITS });
    expect(unzipped.body.toString()).toBe("y".repeat(50_000));
    expect((await failure({ url: `${base}/gzip`, policy: LOOPBACK_ALLOWED, maxBytes: 20_000 })).code).toBe("too_large");
  });

  it("holds the deadline against a server that never answers or trickles, and stops on the signal", async () => {
    for (const path of ["/silent", "/trickle"]) {
      const started = Date.now();
      const error = await failure({ url: `${base}${path}`, policy: LOOPBACK_ALLOWED, timeoutMs: 300 });
      expect([error.code, error.message]).toEqual(["timeout", `${base}${path} did not answer in full within 300 ms`]);
      expect(Date.now() - started).toBeLessThan(3_000);
    }
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const aborted = await failure({ url: `${base}/trickle`, policy: LOOPBACK_ALLOWED, signal: controller.signal });
    expect(aborted.code).toBe("aborted");
  });
});
