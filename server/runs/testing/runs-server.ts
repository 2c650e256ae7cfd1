// A real loom server with the platform and agent runs on, for end-to-end tests of the runs API: a database of one of
// the test back ends, an engine (by default a scripted one, whose queued scripts are the model's turns), two
// organizations with an inference key each, and the runs routes beside the platform's.
import type { ServingEngine } from "../../../engine/engine.js";
import type { ModelInfo } from "../../../engine/host/messages.js";
import { createEndpoints } from "../../adapters/endpoints.js";
import { ModelRegistry } from "../../models.js";
import { type Platform, openPlatform } from "../../platform/platform.js";
import { type FreshPlatform, type TestBackend, freshPlatform } from "../../platform/testing/test-databases.js";
import { type LoomServer, startServer } from "../../server.js";
import { SCRIPTED_MODEL, ScriptedEngine } from "../../testing/scripted-engine.js";
import { loopbackOnlyPostForTests } from "../callbacks/testing/loopback-transport.js";
import { type Machines, type MachinesOptions, openMachines } from "../../machines/machines.js";
import type { PaymentsSettings } from "../../machines/payments-config.js";
import { type Runs, type RunsOptions, openRuns } from "../runs.js";

/** The served model's slug in these tests. */
export const RUNS_TEST_MODEL = "service/tim-test-27b";

/** A running server with runs, and what tests need of it. */
export interface RunsServer {
  url: string;
  engine: ServingEngine;
  platform: Platform;
  runs: Runs;
  /** The machine endpoints (off, answering 503, unless the options gave payment settings). */
  machines: Machines;
  /** Two organizations with an inference key each. */
  owner: { organizationId: string; key: string };
  stranger: { organizationId: string; key: string };
  /** Authorized JSON request to the server. */
  call(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/**
 * Starts the server on `engine` (default: a ScriptedEngine) serving `model` (default: the scripted model's info);
 * `runs` options override the test defaults (fast polling, short leases).
 */
export async function startRunsServer(backend: TestBackend, options: {
  engine?: ServingEngine;
  model?: ModelInfo;
  runs: Partial<RunsOptions> & Pick<RunsOptions, "tools">;
  /** Payment settings of the machine endpoints (absent: the endpoints are off). */
  payments?: PaymentsSettings;
  machines?: MachinesOptions;
  /** A database another server uses too (PostgreSQL: two processes on one database); the caller removes it. */
  database?: FreshPlatform;
}): Promise<RunsServer> {
  // Callbacks go to receivers on 127.0.0.1 only, retried within milliseconds.
  const callbacks = { post: loopbackOnlyPostForTests, backoff: { baseMs: 50, capMs: 200 }, pollMs: 50, timeoutMs: 1000 };
  const shared = options.database;
  const fresh = shared ?? await freshPlatform(backend);
  const remove = () => (shared ? Promise.resolve() : fresh.remove());
  const engine = options.engine ?? new ScriptedEngine();
  const registry = new ModelRegistry([{ model: options.model ?? SCRIPTED_MODEL, engine, slugs: { openai: [RUNS_TEST_MODEL], anthropic: ["service/test-marathon"] }, created: 0 }]);
  const platform = await openPlatform({ ...fresh.options, cacheMs: 0 });
  const runs = openRuns(platform, registry, { concurrency: 4, leaseSeconds: 5, worker: { pollMs: 50 }, callbacks, ...options.runs });
  const machines = openMachines(platform, runs, options.payments, options.machines);
  let server: LoomServer;
  try {
    server = await startServer({ registry, auth: platform.authenticator, accountant: platform.accountant, endpoints: createEndpoints(registry) }, "127.0.0.1", 0, [platform.surface, runs.surface, machines.surface]);
  } catch (error) {
    await machines.close();
    await runs.close();
    await platform.close();
    await remove();
    throw error;
  }
  const organization = async (name: string) => {
    const created = await platform.stores.organizations.create(name);
    const { key } = await platform.stores.keys.create(created.id, "inference", `${name} key`);
    return { organizationId: created.id, key };
  };
  const owner = await organization("owner");
  const stranger = await organization("stranger");
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    engine,
    platform,
    runs,
    machines,
    owner,
    stranger,
    async call(method, path, body, key = owner.key) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
    async close() {
      server.close();
      await machines.close();
      await runs.close();
      await platform.close();
      await remove();
    },
  };
}
