// Test helper: runs one request on an engine to its end.
import type { Engine } from "../engine.js";
import type { EngineRequest } from "../request.js";

/** The tokens a request generated; throws the request's error event, or when no finish event came. */
export async function tokensOf(engine: Engine, request: EngineRequest): Promise<number[]> {
  for await (const event of engine.submit(request)) {
    if (event.type === "error") throw event.error;
    if (event.type === "finish") return event.tokens;
  }
  throw new Error("no finish event");
}
