// The machine endpoints (spec 4.7-4.10): pay per run over x402, no account, no key. The body is checked first (a 400
// names the field, and nobody is asked to pay for a request that cannot run), then the payment (402 with the offer,
// or with the failed check), then checkout (202 with the settlement header). Polling is free and needs only the id.
import type { HttpRequest } from "uWebSockets.js";
import { readJsonBody } from "../http/body.js";
import type { ServerContext } from "../http/context.js";
import type { ErrorResponder } from "../http/guard.js";
import { logFailure } from "../http/log.js";
import type { Connection } from "../http/reply.js";
import type { Routes, Surface } from "../http/routes.js";
import { answer, clientErrorOf, decodePathSegment, platformError, read } from "../platform/route-helpers.js";
import { ProtocolError } from "../protocol/internal.js";
import type { RunKind } from "../runs/contract.js";
import { RUN_LIMITS } from "../runs/create-request.js";
import type { AgentEngine, EngineName } from "../runs/engines.js";
import { checkRunSchema, pollShape } from "../runs/routes.js";
import type { RunStore } from "../runs/run-store.js";
import type { Checkout, Purchase } from "./checkout.js";
import { MACHINE_PATHS, type MachineEndpoint } from "./machine-offers.js";
import { parseMachineBody } from "./machine-request.js";
import type { CapturedRequest, GateAnswer, PaymentGate } from "./payment-gate.js";
import type { PaymentsSettings } from "./payments-config.js";

/** What the machine routes need; `payments` undefined: the endpoints are off (503). */
export interface MachineServices {
  payments?: { settings: PaymentsSettings; gate: PaymentGate; checkout: Checkout };
  store: RunStore;
  engines: Readonly<Record<EngineName, AgentEngine>>;
  /** Whether a configured model slug (undefined: the default model) is served here. */
  serves(slug: string | undefined): boolean;
}

const KIND_OF: Record<MachineEndpoint, RunKind> = { search: "machine_search", run: "machine_run" };

const OFF = "machine endpoints are off: this server has no payment configuration (the config file's `payments`, docs/machine-payments.md); they are never free";

/** The machine routes on a server. */
export function machinesSurface(services: MachineServices): (context: ServerContext) => Surface {
  return (context) => ({
    register(routes: Routes) {
      const shape = (): ErrorResponder => platformError;
      for (const endpoint of ["search", "run"] as const) {
        const path = MACHINE_PATHS[endpoint];
        routes.add("POST", path, shape, (connection, req) => {
          const captured = capture(req, path);
          const head = { contentType: req.getHeader("content-type"), contentLength: req.getHeader("content-length") };
          readJsonBody(connection, { ...context.bodyLimits, maxBytes: RUN_LIMITS.maxBodyBytes }, head, (body, complete) => {
            void create(context, services, endpoint, connection, { ...captured, body }, !complete).catch((error: unknown) => connection.fail(error));
          });
        });
        routes.add("GET", `${path}/:id`, shape, (connection, req) => {
          const raw = req.getParameter(0) ?? "";
          void poll(context, services, endpoint, connection, raw).catch((error: unknown) => connection.fail(error));
        }, `${path}/{runId}`);
      }
    },
    errorShapeFor(url) {
      return url.startsWith("/v1/machines/") ? platformError : undefined;
    },
  });
}

/** POST: body, payment, checkout. */
async function create(context: ServerContext, services: MachineServices, endpoint: MachineEndpoint, connection: Connection, request: CapturedRequest, closeConnection: boolean): Promise<void> {
  const route = MACHINE_PATHS[endpoint];
  const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
    context.metrics.request(route, status);
    connection.sendJson(status, body, headers, closeConnection);
  };
  const sendAnswer = (answer: GateAnswer) => send(answer.status, answer.body, answer.headers);
  try {
    if (request.body instanceof ProtocolError) throw request.body;
    const payments = services.payments;
    if (!payments) return send(503, { error: OFF });
    const spec = parseMachineBody(endpoint, request.body, payments.settings.searchEngine, checkRunSchema);
    const engine = services.engines[spec.engine as EngineName];
    if (engine.model === null || !services.serves(engine.model)) {
      // Nobody is asked to pay for a run this deployment cannot do: the caller's choice is a 400, the operator's a 503.
      const why = `engine '${spec.engine}' has no model to run on in this deployment, so no run can be sold (see docs/agent-runs.md: runs.engines in the config)`;
      if (endpoint === "search") return send(503, { error: `search runs are unavailable: ${why}` });
      throw new ProtocolError("invalid_request", why, "engine");
    }
    try {
      await payments.gate.initialize();
    } catch (error) {
      logFailure("payments: the facilitator did not say what it supports (answered 503)", error);
      return send(503, { error: "payments cannot be taken now: the facilitator did not answer; retry later" }, { "retry-after": "5" });
    }
    const decoded = await payments.gate.decode(endpoint, request);
    if ("answer" in decoded) return sendAnswer(decoded.answer);
    // A retry under a payment identifier the journal knows: the first try's outcome, before the facilitator (which
    // would now find the authorization used) is asked anything.
    const previous = () => read("the payment could not be looked up", () => payments.checkout.previous(decoded.decoded, spec));
    const earlier = await previous();
    if (earlier) return await answerPurchase(earlier, payments.gate, endpoint, request, send, sendAnswer);
    const checked = await payments.gate.verify(request, decoded.decoded);
    if ("answer" in checked) {
      // Refused (as used on chain) because a concurrent request with this payment settled it meanwhile: that
      // request's outcome is this one's too.
      const meanwhile = await previous();
      return meanwhile ? await answerPurchase(meanwhile, payments.gate, endpoint, request, send, sendAnswer) : sendAnswer(checked.answer);
    }
    const purchase = await read("the payment could not be recorded", () => payments.checkout.buy(checked.verified, spec));
    return await answerPurchase(purchase, payments.gate, endpoint, request, send, sendAnswer);
  } catch (thrown) {
    const error = clientErrorOf(thrown);
    if (error === undefined) throw thrown;
    const { status, body, headers } = platformError(error);
    send(status, body, headers);
  }
}

async function answerPurchase(purchase: Purchase, gate: PaymentGate, endpoint: MachineEndpoint, request: CapturedRequest, send: (status: number, body: unknown, headers?: Record<string, string>) => void, sendAnswer: (answer: GateAnswer) => void): Promise<void> {
  if ("bought" in purchase) return send(202, { runId: purchase.bought.runId, status: "queued" }, purchase.bought.headers);
  if ("refused" in purchase) return sendAnswer(await gate.challenge(endpoint, request, purchase.refused));
  if ("conflict" in purchase) return send(409, { error: purchase.conflict });
  return send(503, { error: purchase.pending, ...(purchase.runId ? { runId: purchase.runId } : {}) }, { "retry-after": String(purchase.retryAfterSeconds ?? 5) });
}

/** GET: a machine run of this endpoint's kind by id; any other run (another kind, a legacy run) is not found. */
function poll(context: ServerContext, services: MachineServices, endpoint: MachineEndpoint, connection: Connection, raw: string): Promise<void> {
  return answer(context, `${MACHINE_PATHS[endpoint]}/{runId}`, connection, async () => {
    const id = decodePathSegment(raw, "run id", "runId");
    const run = await read("the run could not be read", () => services.store.get(id));
    if (!run || run.kind !== KIND_OF[endpoint]) throw new ProtocolError("not_found", `no ${endpoint === "search" ? "search" : "run"} ${JSON.stringify(id.slice(0, 100))}`, "runId");
    return pollShape(run);
  });
}

/** What the gate reads of a request, taken before the handler returns (uWS invalidates `req` after). */
function capture(req: HttpRequest, path: string): Omit<CapturedRequest, "body"> {
  const headers: Record<string, string> = {};
  for (const name of ["payment-signature", "x-payment", "user-agent"]) {
    const value = req.getHeader(name);
    if (value !== "") headers[name] = value;
  }
  const host = req.getHeader("host") || "localhost";
  const proto = req.getHeader("x-forwarded-proto") === "https" ? "https" : "http";
  return { headers, url: `${proto}://${host}${path}` };
}
