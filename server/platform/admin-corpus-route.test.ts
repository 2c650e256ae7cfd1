// The real admin route of a loom server (uWebSockets.js, no model loaded) takes a corpus.add of several hundred
// kilobytes: the admin endpoint's body limit is 8 MiB, where other platform bodies stay at 64 KiB.
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEndpoints } from "../adapters/endpoints.js";
import { ModelRegistry } from "../models.js";
import { type LoomServer, startServer } from "../server.js";
import { readAdminEndpointFile } from "./admin/admin-endpoint-file.js";
import { sendAdminCommand } from "./admin/admin-request.js";
import { type Platform, openPlatform } from "./platform.js";
import { migratedDataDir } from "./testing/test-databases.js";

describe("the admin route with corpus documents", () => {
  let dataDir: string;
  let platform: Platform;
  let server: LoomServer;
  beforeAll(async () => {
    dataDir = await migratedDataDir();
    platform = await openPlatform({ dataDir });
    const registry = new ModelRegistry([]);
    server = await startServer({ registry, auth: platform.authenticator, accountant: platform.accountant, endpoints: createEndpoints(registry) }, "127.0.0.1", 0, [platform.surface]);
    platform.offerAdminEndpoint(server.port);
  });
  afterAll(async () => {
    server?.close();
    await platform?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("adds documents whose command is far above 64 KiB", async () => {
    const endpoint = readAdminEndpointFile(dataDir)!;
    const body = "tokens ".repeat(70_000); // 490,000 characters, near the largest document
    const documents = [1, 2, 3].map((index) => ({ url: `https://example.org/${index}`, title: `Document ${index}`, body }));
    expect(await sendAdminCommand(endpoint, { command: "corpus.add", documents })).toEqual({ added: 3, replaced: 0, count: 3 });
  });
});
