// The dashboard's answers when the platform's stores fail: sign-ins with a Redis limit store (with a password) that
// cannot be reached, and the dashboard's reads once its database is gone, answer 502 in loom's words: no body or
// header shows the password, Redis's host:port or the data dir; the log has the details, the password redacted.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { TEST_BACKENDS, freshPlatform } from "../platform/testing/test-databases.js";
import { closedLoopbackPort } from "../testing/closed-port.js";
import { type ReadResponse, readResponse, secretsShown } from "../testing/secrets.js";
import { startDashboardServer } from "./testing/dashboard-server.js";

const SESSION = "/api/v1/dashboard/session";
const PASSWORD = "SECRET-REDIS";

/** Everything written to stderr by the file's tests (the log). */
const logged: string[] = [];
beforeAll(() => {
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    logged.push(String(chunk));
    return true;
  });
});
afterAll(() => {
  vi.restoreAllMocks();
});

/** Reads a response whole and fails if its body or a header shows one of `secrets`. */
async function checked(response: Response, secrets: readonly string[]): Promise<ReadResponse> {
  const read = await readResponse(response);
  expect(secretsShown(read, secrets), `${response.status} ${read.text}`).toEqual([]);
  return read;
}

describe("the dashboard when the platform's stores fail", () => {
  it("answers sign-ins without Redis, and reads without the database, with 502 and neither's address", async () => {
    const port = await closedLoopbackPort();
    const fresh = await freshPlatform(TEST_BACKENDS[0]!, { redisUrl: `redis://:${PASSWORD}@127.0.0.1:${port}` });
    const secrets = [PASSWORD, `127.0.0.1:${port}`, fresh.options.dataDir!];
    const server = await startDashboardServer({ platform: fresh.options });
    try {
      const { token } = await server.platform.stores.operatorTokens.create("ops");
      const signIn = () => fetch(`${server.base}${SESSION}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ operatorToken: token }), signal: AbortSignal.timeout(10_000) });
      const refused = await checked(await signIn(), secrets);
      expect(refused.status).toBe(502);
      expect(refused.body.error).toBe("sign-in attempts cannot be counted: the rate-limit store did not answer");

      // The database goes away: an operator's bearer token cannot be checked.
      await server.platform.database.close();
      const unread = await checked(await fetch(`${server.base}/api/v1/operator/organizations`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10_000) }), secrets);
      expect(unread.status).toBe(502);
      expect(unread.body.error).toBe("the operator token could not be checked: the platform database did not answer");

      const log = logged.join("");
      expect(log).toMatch(/loom: sign-in attempts cannot be counted \(refused\): Redis limit store at 127\.0\.0\.1:\d+ unavailable/);
      expect(log).toMatch(/loom: the operator token could not be checked: the database at .* is unavailable/);
      expect(log).not.toContain(PASSWORD);
    } finally {
      await server.close();
      await fresh.remove();
    }
  }, 60_000);
});
