// Who the guard believes a request comes from, over raw sockets: a trusted proxy that adds a header line of its own
// (rather than extending the client's X-Forwarded-For or X-Forwarded-Proto line) is still the one believed.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createEndpoints } from "../adapters/endpoints.js";
import { ModelRegistry } from "../models.js";
import { type LoomServer, startServer } from "../server.js";
import { rawExchange, rawRequest } from "../testing/raw-http.js";
import { OpenAccess } from "./auth.js";

/** Answers what the guard made of the request's origin. */
const PROBE = "/probe/origin";

/** A server whose one route answers the guard's ClientOrigin, trusting `trustedProxies`. */
function probeServer(trustedProxies: string[]): Promise<LoomServer> {
  const registry = new ModelRegistry([]);
  const errors = () => (error: { status: number; message: string }) => ({ status: error.status, body: { error: error.message }, headers: {} });
  return startServer({ registry, auth: new OpenAccess(), endpoints: createEndpoints(registry), trustedProxies }, "127.0.0.1", 0, [
    () => ({ register: (routes) => routes.add("GET", PROBE, errors, (connection) => connection.sendJson(200, connection.client)) }),
  ]);
}

async function originFrom(server: LoomServer, headers: Record<string, string | string[]>): Promise<{ address: string; https: boolean; hsts: string | undefined }> {
  const { responses } = await rawExchange(server.port, rawRequest("GET", PROBE, headers), { quietMs: 300 });
  expect(responses).toHaveLength(1);
  expect(responses[0]!.status).toBe(200);
  return { ...JSON.parse(responses[0]!.body), hsts: responses[0]!.headers["strict-transport-security"] };
}

describe("the guard reads every X-Forwarded-For and X-Forwarded-Proto line", () => {
  let server: LoomServer;

  beforeAll(async () => {
    server = await probeServer(["127.0.0.0/8"]);
  });
  afterAll(() => server?.close());

  const originOf = (headers: Record<string, string | string[]>) => originFrom(server, headers);

  it("takes the address the proxy's own line adds, not the client's first line", async () => {
    // The client wrote the first line; the trusted proxy (127.0.0.1) added the second with the address it saw.
    expect((await originOf({ "x-forwarded-for": ["198.51.100.7", "203.0.113.4"] })).address).toBe("203.0.113.4");
    expect((await originOf({ "x-forwarded-for": ["198.51.100.7, 10.1.1.1", "203.0.113.4, 127.0.0.2"] })).address).toBe("203.0.113.4");
    expect((await originOf({ "x-forwarded-for": "203.0.113.4" })).address).toBe("203.0.113.4");
  });

  it("takes the scheme of the proxy's own X-Forwarded-Proto line: no HTTPS (nor HSTS) because a client said so", async () => {
    expect(await originOf({ "x-forwarded-for": "203.0.113.4", "x-forwarded-proto": ["https", "http"] })).toEqual({ address: "203.0.113.4", https: false, hsts: undefined });
    expect(await originOf({ "x-forwarded-for": "203.0.113.4", "x-forwarded-proto": ["http", "https"] })).toEqual({ address: "203.0.113.4", https: true, hsts: "max-age=31536000" });
  });

  it("reads a long chain from its right end, bounded", async () => {
    const spoofed = Array.from({ length: 200 }, (_, i) => `198.51.${i % 250}.${i % 200}`).join(", ");
    expect((await originOf({ "x-forwarded-for": [spoofed, spoofed, "203.0.113.9"] })).address).toBe("203.0.113.9");
  });
});

describe("a proxy not listed in trustedProxies", () => {
  it("is named on stderr the first time it sends X-Forwarded-For, and counts as the client", async () => {
    const server = await probeServer([]);
    const written: string[] = [];
    const write = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    try {
      expect((await originFrom(server, {})).address).toBe("127.0.0.1");
      expect(written).toEqual([]);
      for (const client of ["203.0.113.4", "203.0.113.5"]) expect(await originFrom(server, { "x-forwarded-for": client, "x-forwarded-proto": "https" })).toEqual({ address: "127.0.0.1", https: false, hsts: undefined });
      expect(written).toEqual([expect.stringMatching(/^loom: 127\.0\.0\.1 sent X-Forwarded-For but is not in trustedProxies.*\n$/)]);
    } finally {
      write.mockRestore();
      server.close();
    }
  });
});
