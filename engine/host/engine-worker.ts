// The engine's own thread: loads the model, runs an Engine, and relays requests and events over the parent port.
// Forward passes block this thread only, so the server's event loop keeps answering sockets, pings and /metrics.
// Started by WorkerEngine (engine/host/worker-engine.ts) from dist/, the compiled form of this file.
import { parentPort, workerData } from "node:worker_threads";
import { Engine } from "../engine.js";
import { loadModel } from "../load.js";
import { EngineError } from "../request.js";
import { type EngineWorkerData, type FromWorker, type ToWorker, describeModel, sendableError, sendableEvent } from "./messages.js";

const port = parentPort;
if (!port) throw new Error("engine-worker.js runs as a worker thread (started by WorkerEngine)");
const data = workerData as EngineWorkerData;
const send = (message: FromWorker) => port.postMessage(message);

// Messages that arrive while the model loads are held by the port until this listener's engine exists.
const modelPromise = loadModel(data.path, {
  ...data.load,
  onProgress: ({ loadedBytes, totalBytes }) => send({ type: "progress", loadedBytes, totalBytes }),
});
const enginePromise = modelPromise.then((model) => {
  const engine = new Engine(model, data.engine);
  engine.prepare(); // the vocabulary trie and token bounds, so the first request does not wait for them
  engine.onPrefixCacheChange((update) => send({ type: "cache", update }));
  send({ type: "ready", model: describeModel(model), prompt: engine.promptSettings });
  return engine;
});
enginePromise.catch((error: unknown) => {
  send({ type: "load-failed", error: sendableError(error) });
  port.close();
});

port.on("message", (message: ToWorker) => {
  if (message.type === "exit-for-testing") {
    // A crash for the recovery tests: no engine.close(), no model.dispose(), no "stop".
    if (data.testHooks === true) process.exit(message.code);
    return;
  }
  void enginePromise.then((engine) => handle(engine, message), () => undefined);
});

function handle(engine: Engine, message: ToWorker): void {
  switch (message.type) {
    case "submit":
      void relay(engine, message);
      return;
    case "abort":
      engine.abort(message.id);
      return;
    case "call":
      if (message.question.method === "embed") {
        // Answered when the inputs have run through the step loop, not at once.
        const call = message.call;
        engine.embed(message.question.request).then(
          (answer) => send({ type: "reply", call, answer }),
          (error: unknown) => send({ type: "reply", call, error: sendableError(error) }),
        );
        return;
      }
      try {
        const question = message.question;
        const answer = question.method === "stats" ? engine.stats()
          : question.method === "prefixCache" ? engine.prefixCacheSnapshot()
          : question.method === "tokenize" ? engine.tokenize(question.request)
          : question.method === "detokenize" ? engine.detokenize(question.request)
          : engine.countTokens(question.request);
        send({ type: "reply", call: message.call, answer });
      } catch (error) {
        send({ type: "reply", call: message.call, error: sendableError(error) });
      }
      return;
    case "stop":
      // A graceful end: terminating a thread while Dawn has GPU work in flight takes the whole process down.
      engine.close();
      void modelPromise.then((model) => model.dispose()).finally(() => process.exit(0));
      return;
  }
}

/**
 * Streams one request's events back; the request ends (finish or error) on the engine's side, not here. NOTE: a
 * failure here fails this request only: an unhandled rejection would end the thread, and every request with it.
 */
async function relay(engine: Engine, { request, prepared, aborted }: Extract<ToWorker, { type: "submit" }>): Promise<void> {
  try {
    const stream = engine.submit(request, prepared);
    // In the same task as the submit: no step can run the request first.
    if (aborted) engine.abort(request.id);
    for await (const event of stream) send({ type: "event", event: sendableEvent(event) });
  } catch (error) {
    engine.abort(request.id);
    const failure = new EngineError("internal", `the engine thread could not relay this request: ${(error as Error)?.message ?? String(error)}`);
    send({ type: "event", event: { type: "error", requestId: request.id, error: sendableError(failure) } });
  }
}
