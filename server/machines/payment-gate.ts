// The x402 side of the machine endpoints, on the protocol's own packages: @x402/core's resource server builds the
// challenge (with the Bazaar discovery and payment-identifier extensions), decodes and verifies v2 payments
// (PAYMENT-SIGNATURE) through its HTTP adapter interface, and settles; x402 v1 (X-PAYMENT), which those classes no
// longer read, is decoded here and verified by the same facilitator against v1 requirements. What the packages leave
// to the seller (a payment used at most once, a settled payment always getting its run) is checkout.ts's.
import { createHash } from "node:crypto";
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from "@x402/core/http";
import { type FacilitatorClient, type HTTPAdapter, type HTTPRequestContext, type RoutesConfig, x402HTTPResourceServer, x402ResourceServer } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { getAddress } from "viem";
import { bazaarResourceServerExtension } from "@x402/extensions/bazaar";
import { extractPaymentIdentifier, PAYMENT_IDENTIFIER, paymentIdentifierResourceServerExtension } from "@x402/extensions/payment-identifier";
import { logFailure } from "../http/log.js";
import { machineRouteConfig, MACHINE_PATHS, type MachineEndpoint, v1Requirements } from "./machine-offers.js";
import type { PaymentsSettings } from "./payments-config.js";
import { describeRefusal, isReasonCode } from "./refusal-reasons.js";

/** What the gate needs of an HTTP request, read synchronously from uWebSockets.js before any await. */
export interface CapturedRequest {
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** The public URL of the resource (scheme and host as the client reached us). */
  url: string;
  body: unknown;
}

/** An HTTP answer the gate decided: a 402 challenge or refusal, or a 503 when payments cannot be taken now. */
export interface GateAnswer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** The EIP-3009 authorization inside an `exact` EVM payment. */
export interface Authorization {
  from: `0x${string}`;
  to: `0x${string}`;
  value: bigint;
  validAfter: number;
  validBefore: number;
  nonce: `0x${string}`;
}

/** A payment header, decoded and matched against the offer, not yet verified by the facilitator. */
export interface DecodedPayment {
  endpoint: MachineEndpoint;
  x402Version: 1 | 2;
  /** The header as sent. */
  header: string;
  /** The decoded payment header. */
  payload: Record<string, unknown>;
  authorization: Authorization;
  paymentIdentifier?: string;
  /** sha256 of the decoded payment: "the same payment" for retries under one payment identifier. */
  digest: string;
}

/** A payment the facilitator found valid, not yet settled. */
export interface VerifiedPayment extends Omit<DecodedPayment, "header"> {
  /** The requirements it was verified against, in its protocol version's shape. */
  requirements: Record<string, unknown>;
  declaredExtensions?: Record<string, unknown>;
}

/**
 * A settlement's outcome as the facilitator reported it; "unknown" when it could not say (timeout, network), whose
 * details are logged: they are no client's to see.
 */
export type SettlementOutcome =
  | { settled: true; transaction: string; payer?: string }
  /**
   * `code`: the facilitator's reason code; `reason`: in loom's words, fit to answer a client; `transaction`: the
   * transfer that was sent and failed, when the facilitator names one.
   */
  | { settled: false; code: string; reason: string; transaction?: string }
  | { settled: "unknown" };

/** A refusal from inside the checks: answered as a 402 whose error says which check failed. */
class Refused extends Error {}

/** The facilitator failed rather than refused (v2, where the resource server passes a thrown error on as text). */
class FacilitatorFailed extends Error {}

/** The 503 of a payment the facilitator could not verify: loom's words only (the log has what went wrong). */
const NOT_VERIFIED = "the payment could not be verified now: the facilitator did not answer; nothing was charged: retry";

/** Verifies and settles x402 payments for the two machine endpoints. */
export class PaymentGate {
  private readonly resourceServer: x402ResourceServer;
  private readonly httpServer: x402HTTPResourceServer;
  private ready: Promise<void> | undefined;

  constructor(private readonly settings: PaymentsSettings, private readonly facilitator: FacilitatorClient) {
    this.resourceServer = new x402ResourceServer(facilitator)
      .register(settings.network.caip2, new ExactEvmScheme())
      .registerExtension(bazaarResourceServerExtension)
      .registerExtension(paymentIdentifierResourceServerExtension);
    const routes: RoutesConfig = {
      [`POST ${MACHINE_PATHS.search}`]: machineRouteConfig("search", settings),
      [`POST ${MACHINE_PATHS.run}`]: machineRouteConfig("run", settings),
    };
    this.httpServer = new x402HTTPResourceServer(this.resourceServer, routes);
  }

  /** Asks the facilitator what it supports (once; again after a failure). @throws when it cannot be reached. */
  async initialize(): Promise<void> {
    this.ready ??= this.httpServer.initialize().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  /**
   * Reads a request's payment header and checks what needs no facilitator: the 402 to answer (no payment, a
   * malformed one, or one that does not match the offer), or the decoded payment to verify.
   */
  async decode(endpoint: MachineEndpoint, request: CapturedRequest): Promise<{ answer: GateAnswer } | { decoded: DecodedPayment }> {
    const v2Header = request.headers["payment-signature"];
    const header = v2Header || request.headers["x-payment"];
    const headerName = v2Header ? "PAYMENT-SIGNATURE" : "X-PAYMENT";
    if (!header) return { answer: await this.challenge(endpoint, request, "payment required: send an X-PAYMENT (x402 v1) or PAYMENT-SIGNATURE (x402 v2) header") };
    try {
      const payload = decode(header, headerName);
      const authorization = authorizationOf(payload, headerName);
      this.checkAgainstOffer(endpoint, payload, authorization);
      const digest = createHash("sha256").update(JSON.stringify(payload)).digest("hex");
      const paymentIdentifier = identifierOf(payload);
      const x402Version = payload.x402Version as 1 | 2;
      return { decoded: { endpoint, x402Version, header, payload, authorization, digest, ...(paymentIdentifier ? { paymentIdentifier } : {}) } };
    } catch (error) {
      // Stryker disable next-line ConditionalExpression: every check above throws Refused; the rethrow is for a bug's error, which no input reaches
      if (error instanceof Refused) return { answer: await this.challenge(endpoint, request, error.message) };
      throw error;
    }
  }

  /** Has the facilitator verify a decoded payment: the 402 (or 503) to answer, or the payment to settle. */
  async verify(request: CapturedRequest, decoded: DecodedPayment): Promise<{ answer: GateAnswer } | { verified: VerifiedPayment }> {
    const { endpoint, header, ...payment } = decoded;
    try {
      if (payment.x402Version === 2) return { verified: { endpoint, ...payment, ...(await this.verifyV2(endpoint, request, header)) } };
      const requirements = v1Requirements(endpoint, this.settings, request.url);
      const result = await this.facilitator.verify(payment.payload as unknown as PaymentPayload, requirements as unknown as PaymentRequirements).catch((error: unknown) => {
        // The HTTP facilitator client throws a VerifyError for a refusal answered with a non-2xx status.
        const reason = (error as { invalidReason?: unknown }).invalidReason;
        if (typeof reason === "string") return { isValid: false, invalidReason: reason, invalidMessage: (error as { invalidMessage?: string }).invalidMessage };
        throw error;
      });
      if (!result.isValid) throw new Refused(refusal("verification", result.invalidReason, result.invalidMessage));
      return { verified: { endpoint, ...payment, requirements } };
    } catch (error) {
      if (error instanceof Refused) return { answer: await this.challenge(endpoint, request, error.message) };
      // Nothing was charged: the facilitator could not be asked. The client may retry the same payment.
      logFailure("payments: a payment could not be verified (answered 503)", error);
      return { answer: { status: 503, headers: { "retry-after": "5" }, body: { error: NOT_VERIFIED } } };
    }
  }

  /** Settles a verified (or journaled) payment through the facilitator. Never throws: an unknown outcome says so. */
  async settle(payment: Pick<VerifiedPayment, "x402Version" | "payload" | "requirements" | "declaredExtensions">): Promise<SettlementOutcome> {
    let result: SettleResponse;
    try {
      result = payment.x402Version === 2
        ? await this.resourceServer.settlePayment(payment.payload as unknown as PaymentPayload, payment.requirements as unknown as PaymentRequirements, payment.declaredExtensions)
        : await this.facilitator.settle(payment.payload as unknown as PaymentPayload, payment.requirements as unknown as PaymentRequirements);
    } catch (error) {
      // The library throws a SettleError for a refused settlement: that one has a definite reason.
      const { errorReason: reason, errorMessage, transaction } = error as { errorReason?: unknown; errorMessage?: string; transaction?: unknown };
      if (typeof reason === "string" && reason !== "") return { settled: false, code: reason, reason: refusal("settlement", reason, errorMessage), ...sentIn(transaction) };
      logFailure("payments: a settlement got no outcome from the facilitator", error);
      return { settled: "unknown" };
    }
    if (!result.success) return { settled: false, code: result.errorReason ?? "unknown_reason", reason: refusal("settlement", result.errorReason, result.errorMessage), ...sentIn(result.transaction) };
    return { settled: true, transaction: result.transaction, ...(result.payer ? { payer: result.payer } : {}) };
  }

  /** The settlement header of a paid answer, in the payment's protocol version. */
  settlementHeaders(x402Version: 1 | 2, transaction: string | undefined, payerAddress: string): Record<string, string> {
    const { network } = this.settings;
    const payer = getAddress(payerAddress);
    if (x402Version === 2) return this.httpServer.createSettlementHeaders({ success: true, transaction: transaction ?? "", network: network.caip2, payer });
    return { "X-PAYMENT-RESPONSE": encodePaymentResponseHeader({ success: true, transaction: transaction ?? "", network: network.v1Name ?? network.caip2, payer } as SettleResponse) };
  }

  /**
   * The 402 that asks for payment (or says why a payment was refused): the x402 v1 body (`accepts` in v1's shape, with
   * `error`), and the v2 PAYMENT-REQUIRED header the resource server builds (same error), so both generations can pay.
   */
  async challenge(endpoint: MachineEndpoint, request: CapturedRequest, error: string): Promise<GateAnswer> {
    // Stryker disable next-line StringLiteral: without the context's method the resource server asks the adapter, which says POST
    const unpaid: HTTPRequestContext = { adapter: adapterOf(request, MACHINE_PATHS[endpoint], {}), path: MACHINE_PATHS[endpoint], method: "POST" };
    const processed = await this.httpServer.processHTTPRequest(unpaid);
    // Stryker disable next-line ConditionalExpression,StringLiteral: unreachable: an unpaid request on a configured route is always challenged
    if (processed.type !== "payment-error") throw new Error(`the x402 resource server did not challenge an unpaid ${MACHINE_PATHS[endpoint]} (${processed.type})`);
    // The body is ours (sendJson sets its Content-Type); the resource server's PAYMENT-REQUIRED and Cache-Control stay.
    const headers = Object.fromEntries(Object.entries(processed.response.headers).filter(([name]) => name.toLowerCase() !== "content-type")) as Record<string, string>;
    const required = decodePaymentRequiredHeader(headers["PAYMENT-REQUIRED"]!);
    headers["PAYMENT-REQUIRED"] = encodePaymentRequiredHeader({ ...required, error });
    const accepts = this.settings.network.v1Name !== undefined ? [v1Requirements(endpoint, this.settings, request.url)] : [];
    return { status: 402, headers, body: { x402Version: 1, error, accepts } };
  }

  /** The checks that need no facilitator, so each can say exactly what is wrong. @throws Refused */
  private checkAgainstOffer(endpoint: MachineEndpoint, payload: Record<string, unknown>, authorization: Authorization): void {
    const { settings } = this;
    const price = settings.prices[endpoint].atomic;
    const same = (a: unknown, b: string) => typeof a === "string" && a.toLowerCase() === b.toLowerCase();
    if (payload.x402Version === 1) {
      if (payload.scheme !== "exact") throw new Refused(`wrong scheme: ${show(payload.scheme)}; only "exact" is accepted`);
      if (!same(payload.network, settings.network.v1Name ?? settings.network.caip2)) throw new Refused(`wrong chain: ${show(payload.network)}; pay on ${settings.network.v1Name ?? settings.network.caip2}`);
    } else {
      const accepted = payload.accepted as Record<string, unknown> | undefined;
      if (typeof accepted !== "object" || accepted === null) throw new Refused("malformed payment: accepted (the requirements paid for) is missing");
      if (accepted.scheme !== "exact") throw new Refused(`wrong scheme: ${show(accepted.scheme)}; only "exact" is accepted`);
      if (!same(accepted.network, settings.network.caip2)) throw new Refused(`wrong chain: ${show(accepted.network)}; pay on ${settings.network.caip2}`);
      if (!same(accepted.asset, settings.asset.address)) throw new Refused(`wrong asset: ${show(accepted.asset)}; pay in ${settings.asset.address}`);
      if (!same(accepted.payTo, settings.payTo)) throw new Refused(`wrong recipient: ${show(accepted.payTo)}; pay to ${settings.payTo}`);
    }
    if (!same(authorization.to, settings.payTo)) throw new Refused(`wrong recipient: the authorization pays ${authorization.to}; pay to ${settings.payTo}`);
    if (authorization.value < price) throw new Refused(`amount too low: the authorization pays ${authorization.value}; the price is ${price} (smallest units of ${settings.asset.address})`);
    if (authorization.value !== price) throw new Refused(`amount does not match the price: the authorization pays ${authorization.value}; the price is ${price}`);
    const now = Math.floor(Date.now() / 1000);
    if (authorization.validBefore <= now) throw new Refused(`authorization expired: validBefore ${authorization.validBefore} is past (now ${now})`);
    if (authorization.validAfter > now) throw new Refused(`authorization not yet valid: validAfter ${authorization.validAfter} is in the future (now ${now})`);
  }

  /** v2: the resource server's own path (decode, match, extensions, facilitator verify). @throws Refused */
  private async verifyV2(endpoint: MachineEndpoint, request: CapturedRequest, header: string): Promise<Pick<VerifiedPayment, "payload" | "requirements" | "declaredExtensions">> {
    const path = MACHINE_PATHS[endpoint];
    // Stryker disable next-line StringLiteral: without the context's method the resource server asks the adapter, which says POST
    const context: HTTPRequestContext = { adapter: adapterOf(request, path, { "payment-signature": header }), path, method: "POST", paymentHeader: header };
    const processed = await this.httpServer.processHTTPRequest(context);
    if (processed.type === "payment-verified") {
      return {
        payload: processed.paymentPayload as unknown as Record<string, unknown>,
        requirements: processed.paymentRequirements as unknown as Record<string, unknown>,
        ...(processed.declaredExtensions ? { declaredExtensions: processed.declaredExtensions } : {}),
      };
    }
    // Stryker disable next-line ConditionalExpression,StringLiteral: unreachable: both machine routes are configured in the constructor
    if (processed.type === "no-payment-required") throw new Error(`the x402 resource server has no route for ${path}`);
    const encoded = processed.response.headers["PAYMENT-REQUIRED"];
    const reason = encoded ? decodePaymentRequiredHeader(encoded).error : undefined;
    if (reason === "No matching payment requirements") throw new Refused("the payment's accepted requirements match none offered (compare scheme, network, asset, amount, payTo, maxTimeoutSeconds and extra with the 402)");
    // The resource server answers a facilitator that threw (an HTTP error, a timeout) with the error's message as the
    // reason: that is the facilitator failing, not the payment refused, and its text is the log's.
    if (reason !== undefined && !isReasonCode(reason)) throw new FacilitatorFailed(reason);
    throw new Refused(describeRefusal(reason));
  }
}

/**
 * A refusal's message for the client (describeRefusal: loom's words and the reason code); what the facilitator said
 * beyond its code, which can quote its RPC endpoint with the key in the URL, goes to the log.
 */
function refusal(stage: "verification" | "settlement", reason: string | undefined, message: string | undefined): string {
  const said: string[] = [];
  if (reason && !isReasonCode(reason)) said.push(reason);
  if (message && message !== reason) said.push(message);
  if (said.length > 0) logFailure(`payments: a payment's ${stage} failed (${isReasonCode(reason) ? reason : "no reason code"})`, said.join("; "));
  return describeRefusal(reason);
}

/** The transaction a failed settlement names, when it is a transaction hash (facilitators answer "" for none). */
function sentIn(transaction: unknown): { transaction?: string } {
  return typeof transaction === "string" && /^0x[0-9a-fA-F]{64}$/.test(transaction) ? { transaction } : {};
}

/** The resource server's view of a request (HTTPAdapter), over what was captured from it. */
function adapterOf(request: CapturedRequest, path: string, payment: Record<string, string>): HTTPAdapter {
  const headers: Record<string, string> = { ...request.headers, ...payment };
  if (!payment["payment-signature"]) delete headers["payment-signature"];
  return {
    getHeader: (name) => headers[name.toLowerCase()],
    // Stryker disable next-line ArrowFunction,StringLiteral: the resource server reads the context's method first (set on every context here)
    getMethod: () => "POST",
    // Stryker disable next-line ArrowFunction: only Bazaar's dynamic routes read the adapter's path (the context's path matches routes)
    getPath: () => path,
    getUrl: () => request.url,
    // Always JSON: the endpoints are for programs, and an HTML paywall would need a wallet UI this server does not ship.
    // Stryker disable next-line StringLiteral: "" is no browser's Accept either: the same JSON answers
    getAcceptHeader: () => "application/json",
    // Stryker disable next-line ArrowFunction,LogicalOperator,StringLiteral: read only to spot a browser after an Accept with text/html, which this adapter never says
    getUserAgent: () => headers["user-agent"] ?? "",
    // Stryker disable next-line ArrowFunction: the resource server reads no body for these routes
    getBody: () => request.body,
  };
}

/** The base64 JSON of a payment header. @throws Refused naming the header */
function decode(header: string, headerName: string): Record<string, unknown> {
  let payload: unknown;
  try {
    // Stryker disable next-line ConditionalExpression,Regex,StringLiteral: x402's decodePaymentSignatureHeader refuses all this pattern does (its own is stricter), with the same Refused below
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(header.trim())) throw new Error("not base64");
    payload = decodePaymentSignatureHeader(header.trim());
  } catch {
    throw new Refused(`malformed ${headerName} header: it must be the base64 of a JSON payment payload`);
  }
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) throw new Refused(`malformed ${headerName} header: its JSON is not an object`);
  const version = (payload as Record<string, unknown>).x402Version;
  if (version !== 1 && version !== 2) throw new Refused(`malformed ${headerName} header: x402Version must be 1 or 2, got ${show(version)}`);
  return payload as Record<string, unknown>;
}

/** The `exact` EVM payload's authorization, every field checked. @throws Refused naming the field */
function authorizationOf(payment: Record<string, unknown>, headerName: string): Authorization {
  const malformed = (field: string, rule: string) => new Refused(`malformed ${headerName} header: payload.${field} ${rule}`);
  const inner = payment.payload as Record<string, unknown> | undefined;
  if (typeof inner !== "object" || inner === null) throw malformed("", "must be an object with signature and authorization");
  if (typeof inner.signature !== "string" || !/^0x[0-9a-fA-F]+$/.test(inner.signature)) throw malformed("signature", "must be a 0x-prefixed hex string");
  const auth = inner.authorization as Record<string, unknown> | undefined;
  if (typeof auth !== "object" || auth === null) throw malformed("authorization", "must be an object (EIP-3009 transferWithAuthorization)");
  const address = (field: string) => {
    const value = auth[field];
    if (typeof value !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(value)) throw malformed(`authorization.${field}`, "must be an address");
    return value as `0x${string}`;
  };
  const unsigned = (field: string) => {
    const value = auth[field];
    if (typeof value !== "string" || !/^[0-9]{1,78}$/.test(value)) throw malformed(`authorization.${field}`, "must be a decimal integer string");
    return BigInt(value);
  };
  const nonce = auth.nonce;
  if (typeof nonce !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(nonce)) throw malformed("authorization.nonce", "must be 32 bytes of hex");
  // Unix seconds; a validBefore past 2^53 is "never expires", the same as the largest safe integer.
  const seconds = (field: string) => {
    const value = unsigned(field);
    // Stryker disable next-line EqualityOperator: at 2^53 - 1 itself both branches give Number.MAX_SAFE_INTEGER
    return value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value);
  };
  return { from: address("from"), to: address("to"), value: unsigned("value"), validAfter: seconds("validAfter"), validBefore: seconds("validBefore"), nonce: nonce.toLowerCase() as `0x${string}` };
}

/** The payment-identifier extension's id, when the client sent a valid one. @throws Refused for an invalid one */
function identifierOf(payload: Record<string, unknown>): string | undefined {
  const extensions = payload.extensions as Record<string, unknown> | undefined;
  const extension = extensions?.[PAYMENT_IDENTIFIER] as { info?: { id?: unknown } } | undefined;
  // Clients echo the offer's declaration (no id) when they do not use the extension.
  if (extension?.info?.id === undefined) return undefined;
  const id = extractPaymentIdentifier(payload as unknown as PaymentPayload, true);
  if (id === null) throw new Refused("malformed payment-identifier extension: info.id must be 16 to 128 characters of letters, digits, _ and -");
  return id;
}

function show(value: unknown): string {
  const shown = JSON.stringify(value) ?? String(value);
  return shown.length > 100 ? `${shown.slice(0, 97)}...` : shown;
}
