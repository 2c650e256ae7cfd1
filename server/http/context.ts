// What every route of one server shares: its settings, metrics, error log, the budget request bodies draw on, and the
// requests in flight.
import type { JsonWhitespace } from "../../engine/grammar/index.js";
import type { ChatCompletionStorage } from "../adapters/openai/stored.js";
import type { ResponsesStorage } from "../adapters/responses/endpoint.js";
import type { ModelRegistry } from "../models.js";
import { type ImageLimits, type ImageSettings, imageSettings } from "../images/limits.js";
import type { NetworkPolicy } from "../runs/tools/network-policy.js";
import { type Accountant, unmetered } from "./accounting.js";
import type { Authenticator } from "./auth.js";
import { BodyBudget, type BodyLimits } from "./body.js";
import { TrustedProxies } from "./client-address.js";
import { InFlightRequests } from "./drain.js";
import type { WireEndpoint } from "./endpoint.js";
import { type ServerLog, stderrLog } from "./log.js";
import { Metrics } from "./metrics.js";

/** Server settings; docs/configuration.md lists the config fields they come from. */
export interface ServerOptions {
  registry: ModelRegistry;
  auth: Authenticator;
  /** Admission against limits and accounting of usage (default: nothing metered). */
  accountant?: Accountant;
  endpoints: WireEndpoint[];
  /** Where the Responses API keeps stored responses; without it, POST /v1/responses is not served. */
  responses?: ResponsesStorage;
  /** Where chat completions sent with `store: true` are kept; without it, `store: true` is refused. */
  chatCompletions?: ChatCompletionStorage;
  /** Largest request body in bytes (default 8 MiB). */
  maxBodyBytes?: number;
  /** Bytes of request bodies being received at once across the server (default 256 MiB); past it, 503 / 529. */
  maxBufferedBodyBytes?: number;
  /** Seconds a request body may take to arrive (default 30); past it, 408 and the connection is closed. */
  bodyTimeoutSeconds?: number;
  /** Requests allowed to wait per model before new ones get 503 / 529 (default 256). */
  maxQueue?: number;
  /**
   * Image input: the per-request limits (default 8 images, 20 MiB and 50 megapixels each) and where image URLs may be
   * fetched from besides public addresses (default nowhere else).
   */
  images?: { limits?: Partial<ImageLimits>; network?: NetworkPolicy };
  /** Seconds of silence on a stream before a ping (formats that have one; default 10). */
  pingSeconds?: number;
  /** Where failures are reported (default: stderr). */
  log?: ServerLog;
  /**
   * Whitespace structured output may put between JSON tokens: "compact" (default: at most a space after `:` and `,`)
   * or "pretty" (also a line break indented to the nesting level). See engine/grammar/README.md.
   */
  jsonWhitespace?: JsonWhitespace;
  /**
   * Reverse proxies (addresses and CIDR ranges) whose X-Forwarded-For and X-Forwarded-Proto are believed
   * (client-address.ts); default none: the peer is the client, and no request counts as HTTPS.
   */
  trustedProxies?: readonly string[];
}

/** Defaults of {@link ServerOptions}. */
export const SERVER_DEFAULTS = {
  maxBodyBytes: 8 * 1024 * 1024,
  maxBufferedBodyBytes: 256 * 1024 * 1024,
  bodyTimeoutSeconds: 30,
  maxQueue: 256,
  pingSeconds: 10,
} as const;

/** The resolved settings and shared state of one server. */
export class ServerContext {
  /** The HTTP requests being answered, and the server's drain. */
  readonly requests = new InFlightRequests();
  readonly metrics = new Metrics(() => this.requests.count);
  readonly bodyLimits: BodyLimits;
  readonly maxQueue: number;
  readonly pingSeconds: number;
  /** How requests' images are fetched, decoded and bounded. */
  readonly images: ImageSettings;
  /** The trusted proxies, parsed. */
  readonly proxies: TrustedProxies;
  readonly options: ServerOptions & { log: ServerLog; accountant: Accountant };

  constructor(options: ServerOptions) {
    this.options = { ...options, log: options.log ?? stderrLog, accountant: options.accountant ?? unmetered };
    this.maxQueue = options.maxQueue ?? SERVER_DEFAULTS.maxQueue;
    this.pingSeconds = options.pingSeconds ?? SERVER_DEFAULTS.pingSeconds;
    this.images = imageSettings(options.images);
    this.proxies = new TrustedProxies(options.trustedProxies);
    this.bodyLimits = {
      maxBytes: options.maxBodyBytes ?? SERVER_DEFAULTS.maxBodyBytes,
      timeoutMs: (options.bodyTimeoutSeconds ?? SERVER_DEFAULTS.bodyTimeoutSeconds) * 1000,
      budget: new BodyBudget(options.maxBufferedBodyBytes ?? SERVER_DEFAULTS.maxBufferedBodyBytes),
    };
  }

  /** The endpoint of a request to a route both formats share: the one its headers claim, else chat completions'. */
  endpointFor(header: (name: string) => string): WireEndpoint {
    const endpoints = this.options.endpoints;
    return endpoints.find((endpoint) => endpoint.claims(header)) ?? endpoints.find((endpoint) => endpoint.format === "openai") ?? endpoints[0];
  }
}
