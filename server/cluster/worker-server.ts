// The engine worker's server (loom worker): GET /health, and one WebSocket endpoint, /cluster, over which gateways
// holding the cluster token submit requests to its engines and receive their events (frames.ts). A worker has no
// platform and no wire formats of its own: the gateway authenticates, limits, accounts and formats.
import { LOOM_VERSION } from "../version.js";
import type { WebSocket } from "uWebSockets.js";
import type { EngineStream, ServingEngine } from "../../engine/engine.js";
import type { PromptModelSource } from "../../engine/prompt-counter.js";
import { sendableError, sendableEvent } from "../../engine/host/messages.js";
import { EngineError } from "../../engine/request.js";
import type { EmbeddingRequest } from "../../engine/embed/request.js";
import { bindApp, describeUwsBuild, loadUws } from "../http/uws.js";
import { adminTokenMatches } from "../platform/admin/admin-request.js";
import { type FromWorkerFrame, LOAD_INTERVAL_MS, MAX_FRAME_BYTES, STREAM_WINDOW, TO_WORKER_TYPES, type ToWorkerFrame, type WorkerDescription, decodeFrame, encodeFrame, sendableEmbeddings } from "./frames.js";

/** Seconds without traffic before uWS pings a gateway connection, and drops it if the ping goes unanswered. */
const IDLE_TIMEOUT_SECONDS = 16;

/** What a worker serves. */
export interface WorkerServerOptions {
  description: WorkerDescription;
  /** The engine of each of the description's models, by modelKey. */
  engines: ReadonlyMap<string, ServingEngine>;
  /** Each model's tokenizer and chat template (PromptCounter.readSource), by modelKey: sent to every gateway. */
  promptSources: ReadonlyMap<string, PromptModelSource>;
  /** Gateways must send `Authorization: Bearer <token>` to open /cluster. */
  token: string;
  /** Where connection-level failures are reported. */
  log?: (message: string) => void;
}

/** A running worker server. */
export interface WorkerServer {
  readonly port: number;
  /** "uWebSockets.js v20.49 (...)". */
  readonly http: string;
  /** Requests in flight from every gateway. */
  readonly inFlight: number;
  /**
   * Begins a graceful stop: /health answers 503 "draining" from now on, while every request gateways send is still
   * served (a gateway may have routed one before it saw the worker stopping).
   */
  drain(): void;
  /** Resolves once no request is in flight (at once when none is). */
  idle(): Promise<void>;
  /** Stops listening and closes every gateway connection (their requests still running are lost to them). */
  close(): void;
}

/** One request a gateway submitted, as the worker relays it. */
interface Relayed {
  engine: ServingEngine;
  engineId: string;
  /** Events the gateway has room for. */
  credit: number;
  /** Wakes the relay loop when credit arrives or the connection closes. */
  resume?: () => void;
}

/** Per connection: its requests, keyed by the gateway's request id. */
interface Connection {
  number: number;
  requests: Map<string, Relayed>;
  /** Its embedding requests running (asked as calls), keyed by the gateway's request id: abort frames reach them. */
  embeddings: Map<string, { engine: ServingEngine; engineId: string }>;
  closed: boolean;
  loadTimer?: NodeJS.Timeout;
  lastLoadSent: number;
  /** Models whose cache snapshot is on its way: their updates until then are in it. */
  syncing: Set<string>;
}

/**
 * Starts the worker's server; resolves with the bound port.
 * @throws Error when the address cannot be bound.
 */
export async function startWorkerServer(options: WorkerServerOptions, host: string, port: number): Promise<WorkerServer> {
  const { uws: uWS, build } = await loadUws();
  const log = options.log ?? ((message: string) => process.stderr.write(`loom worker: ${message}\n`));
  const sockets = new Set<WebSocket<Connection>>();
  let connections = 0;
  let inFlight = 0;
  /** Requests submitted since start, from every gateway. */
  let submitted = 0;
  let draining = false;
  /** Callers of idle() waiting for the last request in flight to end. */
  const idleWaiters: Array<() => void> = [];

  const send = (socket: WebSocket<Connection>, frame: FromWorkerFrame): void => {
    try {
      if (socket.getUserData().closed) return;
      // 2: dropped past maxBackpressure. A gateway that silently misses an event would wait on its request forever:
      // drop the connection instead, so that it sees a lost worker (credit keeps this from happening in practice).
      if (socket.send(encodeFrame(frame), true) === 2) socket.end(1011, "backpressure limit");
    } catch {
      // Closed meanwhile (uWS throws on any use of a closed socket): its gateway is gone, nothing to tell it.
    }
  };
  /** Tells every gateway the worker's load, at most every LOAD_INTERVAL_MS per connection. */
  const announceLoad = (): void => {
    for (const socket of sockets) {
      const connection = socket.getUserData();
      if (connection.loadTimer) continue;
      const wait = Math.max(0, connection.lastLoadSent + LOAD_INTERVAL_MS - performance.now());
      connection.loadTimer = setTimeout(() => {
        connection.loadTimer = undefined;
        connection.lastLoadSent = performance.now();
        send(socket, { type: "load", inFlight });
      }, wait);
    }
  };

  /** Relays one request's events to its gateway within the credit it grants; ends at the engine's last event. */
  const relay = async (socket: WebSocket<Connection>, id: string, relayed: Relayed, stream: EngineStream): Promise<void> => {
    const connection = socket.getUserData();
    inFlight++;
    announceLoad();
    try {
      for await (const event of stream) {
        while (relayed.credit <= 0 && !connection.closed) await new Promise<void>((resume) => { relayed.resume = resume; });
        if (connection.closed) break; // leaving the loop aborts the request on the engine
        relayed.credit--;
        send(socket, { type: "event", event: sendableEvent({ ...event, requestId: id }) });
      }
    } catch (error) {
      send(socket, { type: "event", event: { type: "error", requestId: id, error: sendableError(new EngineError("internal", (error as Error).message)) } });
    } finally {
      connection.requests.delete(id);
      inFlight--;
      announceLoad();
      if (inFlight === 0) for (const wake of idleWaiters.splice(0)) wake();
    }
  };

  /**
   * Runs a gateway's embedding request, counted in flight as a submitted one (load, drain), and answers its call. Its
   * id (the gateway's) names it in abort frames; engine ids are per connection, as submit's.
   */
  const embed = (socket: WebSocket<Connection>, call: number, engine: ServingEngine, request: EmbeddingRequest): void => {
    const connection = socket.getUserData();
    const reply = (frame: FromWorkerFrame) => send(socket, frame);
    if (!engine.embed) return reply({ type: "reply", call, error: sendableError(new EngineError("invalid_request", "this worker's engine does not produce embeddings", "model")) });
    const id = typeof request?.id === "string" ? request.id : `call-${call}`;
    if (connection.embeddings.has(id) || connection.requests.has(id)) return reply({ type: "reply", call, error: sendableError(new EngineError("invalid_request", `a request with id ${id} is already running`, "id")) });
    const engineId = `g${connection.number}:${id}`;
    connection.embeddings.set(id, { engine, engineId });
    submitted++;
    inFlight++;
    announceLoad();
    void engine.embed({ ...request, id: engineId }).then(
      (result) => reply({ type: "reply", call, answer: sendableEmbeddings(result) }),
      (error: unknown) => reply({ type: "reply", call, error: sendableError(error) }),
    ).finally(() => {
      connection.embeddings.delete(id);
      inFlight--;
      announceLoad();
      if (inFlight === 0) for (const wake of idleWaiters.splice(0)) wake();
    });
  };

  const handle = (socket: WebSocket<Connection>, frame: ToWorkerFrame): void => {
    const connection = socket.getUserData();
    switch (frame.type) {
      case "submit": {
        const id = String(frame.request?.id);
        const engine = options.engines.get(frame.model);
        const refuse = (error: EngineError) => send(socket, { type: "event", event: { type: "error", requestId: id, error: sendableError(error) } });
        if (!engine) return refuse(new EngineError("invalid_request", `this worker does not serve ${JSON.stringify(frame.model)}`, "model"));
        if (connection.requests.has(id)) return refuse(new EngineError("invalid_request", `a request with id ${id} is already running`, "id"));
        // Engine ids are per connection: two gateways may use the same request id.
        const engineId = `g${connection.number}:${id}`;
        const relayed: Relayed = { engine, engineId, credit: STREAM_WINDOW };
        connection.requests.set(id, relayed);
        submitted++;
        void relay(socket, id, relayed, engine.submit({ ...frame.request, id: engineId }));
        return;
      }
      case "credit": {
        const relayed = connection.requests.get(frame.id);
        if (!relayed || !(frame.events > 0)) return;
        relayed.credit += frame.events;
        relayed.resume?.();
        relayed.resume = undefined;
        return;
      }
      case "abort": {
        const relayed = connection.requests.get(frame.id) ?? connection.embeddings.get(frame.id);
        if (relayed) relayed.engine.abort(relayed.engineId);
        return;
      }
      case "call": {
        const engine = options.engines.get(frame.model);
        if (frame.question.method === "embed" && engine) return embed(socket, frame.call, engine, frame.question.request);
        const answer = async () => {
          if (!engine) throw new EngineError("invalid_request", `this worker does not serve ${JSON.stringify(frame.model)}`, "model");
          const question = frame.question;
          if (question.method === "stats") return await engine.stats();
          if (question.method === "countTokens") return await engine.countTokens(question.request);
          if (question.method === "tokenize") return await engine.tokenize(question.request);
          if (question.method === "detokenize") return await engine.detokenize(question.request);
          throw new EngineError("invalid_request", `gateways may ask for stats, token counts, tokenizations and embeddings, not ${JSON.stringify(question.method)}`);
        };
        answer().then(
          (value) => send(socket, { type: "reply", call: frame.call, answer: value }),
          (error: unknown) => send(socket, { type: "reply", call: frame.call, error: sendableError(error) }),
        );
        return;
      }
    }
  };

  /**
   * The model's whole cache to one gateway. Updates that reach this thread before the snapshot's answer are in it
   * (the engine answers in order with its updates) and are not sent; those after it are.
   */
  const sendSnapshot = async (socket: WebSocket<Connection>, model: string, engine: ServingEngine): Promise<void> => {
    const connection = socket.getUserData();
    if (!engine.prefixCacheSnapshot) return;
    connection.syncing.add(model);
    try {
      send(socket, { type: "cache-snapshot", model, snapshot: await engine.prefixCacheSnapshot() });
    } catch (error) {
      log(`the cache of ${model} could not be read for a gateway (it routes without it): ${(error as Error).message}`);
    } finally {
      connection.syncing.delete(model);
    }
  };
  for (const [model, engine] of options.engines) {
    engine.onPrefixCacheChange?.((update) => {
      for (const socket of sockets) if (!socket.getUserData().syncing.has(model)) send(socket, { type: "cache", model, update });
    });
  }

  const app = uWS.App();
  app.get("/health", (res) => {
    const down = [...options.engines.values()].filter((engine) => engine.unavailable);
    const { id, pool } = options.description;
    const body = draining ? { status: "draining", worker: id, pool, inFlight, submitted, version: LOOM_VERSION }
      : down.length === 0 ? { status: "ok", worker: id, pool, inFlight, submitted, version: LOOM_VERSION }
      : { status: "unavailable", worker: id, unavailable: down.map((engine) => engine.unavailable?.message), version: LOOM_VERSION };
    res.cork(() => {
      res.writeStatus(body.status === "ok" ? "200 OK" : "503 Service Unavailable").writeHeader("content-type", "application/json").end(JSON.stringify(body));
    });
  });
  app.ws<Connection>("/cluster", {
    maxPayloadLength: MAX_FRAME_BYTES,
    idleTimeout: IDLE_TIMEOUT_SECONDS,
    maxBackpressure: MAX_FRAME_BYTES,
    upgrade: (res, req, context) => {
      if (!adminTokenMatches(req.getHeader("authorization"), options.token)) {
        res.cork(() => res.writeStatus("401 Unauthorized").writeHeader("content-type", "application/json").end(JSON.stringify({ error: "this worker takes work only from gateways holding its cluster token (LOOM_CLUSTER_TOKEN)" })));
        return;
      }
      const connection: Connection = { number: ++connections, requests: new Map(), embeddings: new Map(), closed: false, lastLoadSent: 0, syncing: new Set() };
      res.upgrade(connection, req.getHeader("sec-websocket-key"), req.getHeader("sec-websocket-protocol"), req.getHeader("sec-websocket-extensions"), context);
    },
    open: (socket) => {
      sockets.add(socket);
      send(socket, { type: "hello", worker: options.description });
      send(socket, { type: "load", inFlight });
      for (const [model, source] of options.promptSources) send(socket, { type: "prompt-model", model, source });
      for (const [model, engine] of options.engines) void sendSnapshot(socket, model, engine);
    },
    message: (socket, data) => {
      let frame: ToWorkerFrame;
      try {
        frame = decodeFrame<ToWorkerFrame>(data, TO_WORKER_TYPES);
      } catch (error) {
        // A gateway that sends what it cannot mean is broken: drop it (its requests are aborted on close).
        log(`closing a gateway connection: ${(error as Error).message}`);
        socket.end(1008, "malformed frame");
        return;
      }
      handle(socket, frame);
    },
    close: (socket) => {
      sockets.delete(socket);
      const connection = socket.getUserData();
      connection.closed = true;
      clearTimeout(connection.loadTimer);
      // The gateway is gone: its requests stop at the engines' next step.
      for (const relayed of connection.requests.values()) {
        relayed.engine.abort(relayed.engineId);
        relayed.resume?.();
      }
      for (const running of connection.embeddings.values()) running.engine.abort(running.engineId);
    },
  });
  app.any("/*", (res) => {
    res.cork(() => res.writeStatus("404 Not Found").writeHeader("content-type", "application/json").end(JSON.stringify({ error: "a loom worker serves only GET /health and the gateways' /cluster WebSocket" })));
  });
  const bound = await bindApp(uWS, app, host, port);
  return {
    port: bound.port,
    http: describeUwsBuild(build),
    get inFlight() {
      return inFlight;
    },
    drain: () => {
      draining = true;
    },
    idle: () => new Promise<void>((resolve) => {
      if (inFlight === 0) resolve();
      else idleWaiters.push(resolve);
    }),
    close: () => {
      bound.close();
      for (const socket of [...sockets]) socket.end(1001, "worker stopping");
    },
  };
}
