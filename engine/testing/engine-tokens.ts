// Test helpers: run one request on an engine to its end.
import type { Engine } from "../engine.js";
import type { EngineEvent, EngineRequest } from "../request.js";

/** A request's finish event. */
export type Finish = Extract<EngineEvent, { type: "finish" }>;

/** Runs a request to the end and returns its finish event (throws the request's error event, or when no finish came). */
export async function finishOf(engine: Engine, request: EngineRequest): Promise<Finish> {
  for await (const event of engine.submit(request)) {
    if (event.type === "error") throw event.error;
    if (event.type === "finish") return event;
  }
  throw new Error("the stream ended without a finish event");
}

/** The tokens a request generated; throws the request's error event, or when no finish event came. */
export async function tokensOf(engine: Engine, request: EngineRequest): Promise<number[]> {
  return (await finishOf(engine, request)).tokens;
}
