// An HTTP(S) client for URLs that come from a model or a user (pages to read, webhook callbacks): it connects only to
// addresses the network policy allows, checked on the address actually connected to (a custom `lookup`, so a DNS
// answer cannot change between the check and the connection), follows redirects itself re-checking each hop, and
// bounds the whole exchange in time and size.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { type IncomingHttpHeaders, type IncomingMessage, request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { type Readable, pipeline } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { type AddressRefusal, type NetworkPolicy, isAllowedHost, refuseAddress } from "./network-policy.js";

/** One request. */
export interface SafeRequest {
  url: string | URL;
  /** Default GET. */
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** The deadline of the whole exchange (every hop's connection, headers and body), in milliseconds. */
  timeoutMs: number;
  /** The most bytes of (decompressed) body read. */
  maxBytes: number;
  /** A longer body: `fail` (default) throws `too_large`; `truncate` keeps the first `maxBytes` and says so. */
  overflow?: "fail" | "truncate";
  /**
   * Redirects (301, 302, 303, 307, 308) followed, each hop checked like the first; one more is an error. Default 5.
   * 0: redirects are not followed and the 3xx response is returned as it is (what a webhook sender wants).
   */
  maxRedirects?: number;
  policy: NetworkPolicy;
  /** Aborts the exchange (a cancelled run). */
  signal?: AbortSignal;
}

/** The final response. */
export interface SafeResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body, decompressed (gzip, deflate, br), at most `maxBytes`. */
  body: Buffer;
  /** True when the body was cut at `maxBytes` (overflow `truncate`). */
  truncated: boolean;
  /** The URL that answered, after redirects. */
  url: string;
}

/** What went wrong, for callers that treat cases apart (a webhook sender retries `network` and `timeout`). */
export type SafeHttpErrorCode = "invalid_url" | "refused" | "timeout" | "aborted" | "too_large" | "too_many_redirects" | "network";

/** A request safeRequest would not make or could not complete; the message says what and why. */
export class SafeHttpError extends Error {
  override readonly name = "SafeHttpError";
  constructor(
    readonly code: SafeHttpErrorCode,
    message: string,
    /** The URL of the hop at fault. */
    readonly url: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Headers that carry the caller's credentials: not sent on to another origin (as fetch does). */
const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"];
const DEFAULT_HEADERS = { "user-agent": "loom-run-tools/0.1", "accept-encoding": "gzip, deflate, br" };

/**
 * Makes one HTTP(S) request under the network policy (see the file's opening comment).
 * @throws SafeHttpError: `invalid_url`, `refused` (a scheme or address the policy does not allow), `timeout`,
 *   `aborted` (the signal), `too_large` (overflow `fail`), `too_many_redirects`, `network` (DNS, connection, TLS).
 */
export async function safeRequest(request: SafeRequest): Promise<SafeResponse> {
  const { timeoutMs, maxBytes, policy, overflow = "fail", maxRedirects = 5 } = request;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw new RangeError(`timeoutMs must be a number > 0, got ${timeoutMs}`);
  if (!(Number.isSafeInteger(maxBytes) && maxBytes >= 0)) throw new RangeError(`maxBytes must be an integer >= 0, got ${maxBytes}`);
  if (!(Number.isSafeInteger(maxRedirects) && maxRedirects >= 0)) throw new RangeError(`maxRedirects must be an integer >= 0, got ${maxRedirects}`);
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = request.signal === undefined ? deadline : AbortSignal.any([request.signal, deadline]);

  let url = parseUrl(request.url);
  let method = (request.method ?? "GET").toUpperCase();
  let body = request.body;
  let headers: Record<string, string> = { ...DEFAULT_HEADERS, ...lowerCaseKeys(request.headers ?? {}) };
  for (let redirects = 0; ; redirects++) {
    const failure = (error: unknown) => describeFailure(error, url, { deadline, timeoutMs, callerSignal: request.signal });
    const response = await exchange(url, method, headers, body, policy, signal).catch((error: unknown) => {
      throw failure(error);
    });
    const location = response.headers.location;
    if (maxRedirects > 0 && REDIRECT_STATUSES.has(response.statusCode ?? 0) && location !== undefined) {
      response.destroy();
      if (redirects >= maxRedirects) throw new SafeHttpError("too_many_redirects", `${url.href} redirected more than ${maxRedirects} times`, url.href);
      const next = parseUrl(location, url);
      // 303, and 301/302 after a POST, continue as a GET without the body (what browsers and fetch do).
      if (response.statusCode === 303 || (method === "POST" && (response.statusCode === 301 || response.statusCode === 302))) {
        method = method === "HEAD" ? "HEAD" : "GET";
        body = undefined;
        headers = withoutKeys(headers, ["content-type", "content-length"]);
      }
      if (next.origin !== url.origin) headers = withoutKeys(headers, CREDENTIAL_HEADERS);
      url = next;
      continue;
    }
    const read = await readBody(response, maxBytes, overflow, url).catch((error: unknown) => {
      throw failure(error);
    });
    return { status: response.statusCode ?? 0, headers: response.headers, body: read.body, truncated: read.truncated, url: url.href };
  }
}

function parseUrl(input: string | URL, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(input, base);
  } catch {
    throw new SafeHttpError("invalid_url", `${JSON.stringify(String(input).slice(0, 200))} is not a valid URL`, String(input));
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new SafeHttpError("refused", `refused: ${url.protocol} URLs are not fetched, only http: and https: (${url.href.slice(0, 200)})`, url.href);
  }
  return url;
}

/** The URL's host without IPv6 brackets: what http.request and the policy take. */
function hostOf(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

function refusal(url: URL, host: string, refused: AddressRefusal): SafeHttpError {
  const what = isIP(host) !== 0 ? `${refused.address} is ${refused.description}` : `${host} resolves to ${refused.address}, ${refused.description}`;
  const allow = `allow it with the network policy's allowPrivate, or allowHosts: [${JSON.stringify(host)}]`;
  return new SafeHttpError("refused", `refused: ${what}; ${allow}`, url.href);
}

/**
 * A `lookup` for http.request that refuses a host when any address it resolves to is not allowed (unless the host is
 * `trusted`): the connection goes to an address this function returned, so the address checked is the one used.
 */
function guardedLookup(url: URL, host: string, trusted: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, "", 0);
      for (const { address } of trusted ? [] : addresses) {
        const refused = refuseAddress(address);
        if (refused !== undefined) return callback(refusal(url, host, refused), "", 0);
      }
      if (addresses.length === 0) return callback(new SafeHttpError("network", `${hostname} resolved to no address`, url.href), "", 0);
      // Node asks for every address (all: true) when it races IPv4 and IPv6 (autoSelectFamily), else for one.
      if (options.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/** Sends one request and resolves with the response once its headers arrive. */
function exchange(url: URL, method: string, headers: Record<string, string>, body: string | Uint8Array | undefined, policy: NetworkPolicy, signal: AbortSignal): Promise<IncomingMessage> {
  const host = hostOf(url);
  const trusted = policy.allowPrivate === true || isAllowedHost(host, policy);
  if (!trusted && isIP(host) !== 0) {
    // An IP literal is connected to without a lookup: check it here.
    const refused = refuseAddress(host);
    if (refused !== undefined) return Promise.reject(refusal(url, host, refused));
  }
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  const withLength = body === undefined ? headers : { ...headers, "content-length": String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const outgoing = send({
      protocol: url.protocol,
      hostname: host,
      port: url.port === "" ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method,
      headers: withLength,
      auth: url.username === "" ? undefined : `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`,
      // A connection of its own: a pooled socket would skip the lookup, and with it the check.
      agent: false,
      lookup: guardedLookup(url, host, trusted),
      signal,
    });
    outgoing.once("response", resolve);
    outgoing.once("error", reject);
    outgoing.end(body);
  });
}

/** Reads (and decompresses) a body up to `maxBytes`. */
async function readBody(response: IncomingMessage, maxBytes: number, overflow: "fail" | "truncate", url: URL): Promise<{ body: Buffer; truncated: boolean }> {
  const encoding = String(response.headers["content-encoding"] ?? "").trim().toLowerCase();
  const decoder = encoding === "gzip" || encoding === "x-gzip" ? createGunzip() : encoding === "deflate" ? createInflate() : encoding === "br" ? createBrotliDecompress() : undefined;
  const tooLarge = () => new SafeHttpError("too_large", `the body of ${url.href} is larger than ${maxBytes} bytes`, url.href);
  const declared = Number(response.headers["content-length"]);
  if (overflow === "fail" && decoder === undefined && Number.isFinite(declared) && declared > maxBytes) {
    response.destroy();
    throw tooLarge();
  }
  let source: Readable = response;
  if (decoder !== undefined) source = pipeline(response, decoder, () => {}); // errors reach the reader through the decoder
  const chunks: Buffer[] = [];
  let length = 0;
  let truncated = false;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      if (length + chunk.length > maxBytes) {
        if (overflow === "fail") throw tooLarge();
        chunks.push(chunk.subarray(0, maxBytes - length));
        length = maxBytes;
        truncated = true;
        break;
      }
      chunks.push(chunk);
      length += chunk.length;
    }
  } catch (error) {
    if (decoder !== undefined && (error as { code?: string }).code?.startsWith("Z_")) {
      throw new SafeHttpError("network", `the ${encoding} body of ${url.href} could not be decompressed: ${(error as Error).message}`, url.href, { cause: error });
    }
    throw error;
  } finally {
    response.destroy();
    decoder?.destroy();
  }
  return { body: Buffer.concat(chunks, length), truncated };
}

/** An error of an exchange as a SafeHttpError: the deadline's, the caller's abort, or the network's. */
function describeFailure(error: unknown, url: URL, context: { deadline: AbortSignal; timeoutMs: number; callerSignal: AbortSignal | undefined }): SafeHttpError {
  if (error instanceof SafeHttpError) return error;
  if (context.callerSignal?.aborted) return new SafeHttpError("aborted", `the request to ${url.href} was aborted`, url.href, { cause: error });
  if (context.deadline.aborted) return new SafeHttpError("timeout", `${url.href} did not answer in full within ${context.timeoutMs} ms`, url.href, { cause: error });
  const code = (error as { code?: string }).code;
  const detail = code === "ENOTFOUND" ? `the host ${url.hostname} was not found` : `${(error as Error).message}${code !== undefined && !(error as Error).message.includes(code) ? ` (${code})` : ""}`;
  return new SafeHttpError("network", `could not fetch ${url.href}: ${detail}`, url.href, { cause: error });
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function withoutKeys(headers: Record<string, string>, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !names.includes(name)));
}
