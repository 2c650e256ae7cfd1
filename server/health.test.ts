// /health answers 503 and names the model and cause once an engine is unavailable (its thread died and could not
// be restarted); /metrics leaves such an engine's gauges out instead of failing the scrape.
import { LOOM_VERSION } from "./version.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { EngineStats } from "../engine/request.js";
import { createEndpoints } from "./adapters/endpoints.js";
import { OpenAccess } from "./http/auth.js";
import { type LoomServer, startServer } from "./server.js";
import { ModelRegistry } from "./models.js";
import { SCRIPTED_MODEL, ScriptedEngine } from "./testing/scripted-engine.js";

/** An engine whose thread could not be restarted. */
class UnavailableEngine extends ScriptedEngine {
  readonly unavailable = new Error("the engine is unavailable: the engine thread exited with code 1");

  override stats(): EngineStats {
    throw this.unavailable;
  }
}

const up = new ScriptedEngine();
const down = new UnavailableEngine();
let server: LoomServer;
let base: string;

beforeAll(async () => {
  const registry = new ModelRegistry([
    { model: SCRIPTED_MODEL, engine: up, slugs: { openai: ["service/tim-up-27b"], anthropic: ["service/up-marathon"] }, created: 1 },
    { model: SCRIPTED_MODEL, engine: down, slugs: { openai: ["service/tim-down-27b"], anthropic: ["service/down-marathon"] }, created: 1 },
  ]);
  server = await startServer({ registry, auth: new OpenAccess(), endpoints: createEndpoints(registry) }, "127.0.0.1", 0);
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(() => server?.close());

it("answers 503 naming the unavailable model and why", async () => {
  const response = await fetch(`${base}/health`);
  expect(response.status).toBe(503);
  expect(await response.json()).toEqual({
    status: "unavailable", models: 2, unavailable: [{ model: "service/tim-down-27b", error: down.unavailable.message }], version: LOOM_VERSION,
  });
});

it("still serves /metrics with the gauges of the engines that answer", async () => {
  const response = await fetch(`${base}/metrics`);
  expect(response.status).toBe(200);
  const text = await response.text();
  expect(text).toContain('model="service/tim-up-27b"');
  expect(text).not.toContain('model="service/tim-down-27b"');
});
