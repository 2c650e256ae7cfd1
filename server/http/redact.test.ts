// URLs in what loom logs: keys in paths and queries, user:password, cut out of free text (viem's multi-line errors,
// driver messages, stack traces) with the scheme, host and port kept; URLs without a host left as they are.
import { afterEach, describe, expect, it, vi } from "vitest";
import { REPEAT_WINDOW_MS, logFailure, stderrLog } from "./log.js";
import { redactUrls } from "./redact.js";

describe("redactUrls", () => {
  it("keeps scheme, host and port, and cuts user info, path, query and fragment", () => {
    const cases: Array<[string, string]> = [
      ["https://eth-mainnet.g.alchemy.com/v2/SECRET", "https://eth-mainnet.g.alchemy.com/***"],
      ["https://mainnet.infura.io/v3/SECRET", "https://mainnet.infura.io/***"],
      ["https://name.base-mainnet.quiknode.pro/SECRET/", "https://name.base-mainnet.quiknode.pro/***"],
      ["http://127.0.0.1:8545/v2/SECRET?x=1#y", "http://127.0.0.1:8545/***"],
      ["https://rpc.example/?apikey=SECRET", "https://rpc.example/***"],
      ["https://rpc.example#SECRET", "https://rpc.example/***"],
      ["redis://:SECRET@10.0.0.5:6379", "redis://***@10.0.0.5:6379"],
      ["rediss://default:SECRET@cache.example:6380/2", "rediss://***@cache.example:6380/***"],
      ["postgres://loom:SECRET@db.internal:5432/loom?options=-c%20search_path%3Dx", "postgres://***@db.internal:5432/***"],
      // Unencoded `/` and `@` in a password: still cut out whole.
      ["redis://:SEC/RET@h:1", "redis://***@h:1"],
      ["postgres://u:SE@CRET@h/db", "postgres://***@h/***"],
      ["https://base.org", "https://base.org"],
      ["https://base.org/", "https://base.org/"],
      ["HTTPS://Base.org/SECRET", "HTTPS://Base.org/***"],
    ];
    for (const [url, redacted] of cases) expect({ url, redacted: redactUrls(url) }).toEqual({ url, redacted });
  });

  it("finds every URL in free text and gives back the sentence's punctuation", () => {
    const viem = [
      "HTTP request failed.",
      "",
      "Status: 500",
      "URL: http://127.0.0.1:40123/v2/SECRET-RPC-KEY",
      'Request body: {"method":"eth_call","params":[{"to":"0x1"}]}',
      "",
      "Version: viem@2.21.0",
    ].join("\n");
    expect(redactUrls(viem)).toBe(viem.replace("/v2/SECRET-RPC-KEY", "/***"));
    expect(redactUrls("the database at postgres://u:SECRET@h:5432/db is unavailable.")).toBe("the database at postgres://***@h:5432/*** is unavailable.");
    expect(redactUrls("(see https://x.example/a/SECRET), then https://y.example/SECRET.")).toBe("(see https://x.example/***), then https://y.example/***.");
    expect(redactUrls('{"url":"https://f.example/SECRET","other":"https://g.example"}')).toBe('{"url":"https://f.example/***","other":"https://g.example"}');
  });

  it("leaves text without URLs, and URLs without a host, as they are", () => {
    const stack = "Error: boom\n    at read (file:///work/main/node_modules/@x402/core/dist/index.mjs:10:5)\n    at node:internal/process/task_queues:95:5";
    expect(redactUrls(stack)).toBe(stack);
    for (const text of ["", "connect ECONNREFUSED 127.0.0.1:6379", "no scheme: example.com/v2/key", "mailto:someone@example.com"]) expect(redactUrls(text)).toBe(text);
  });
});

describe("the log", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  function captureStderr(): string[] {
    const lines: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    return lines;
  }

  it("logFailure writes what failed and the error's message with its causes, URLs redacted", () => {
    const lines = captureStderr();
    logFailure("payments: the chain could not be read", new Error("HTTP request failed.\nURL: https://eth-mainnet.g.alchemy.com/v2/SECRET"));
    logFailure("the limit store", "redis://:SECRET@10.0.0.5:6379 refused");
    logFailure("nameless", Object.assign(new Error(""), { name: "AbortError" }));
    logFailure("the facilitator", new Error("Failed to initialize", { cause: new Error("getSupported failed (500): see https://f.example/SECRET", { cause: "ECONNRESET" }) }));
    logFailure("the database", new Error("the database at h:5432 is unavailable: connect ECONNREFUSED", { cause: new Error("connect ECONNREFUSED") }));
    expect(lines).toEqual([
      "loom: payments: the chain could not be read: HTTP request failed.\nURL: https://eth-mainnet.g.alchemy.com/***\n",
      "loom: the limit store: redis://***@10.0.0.5:6379 refused\n",
      "loom: nameless: AbortError\n",
      "loom: the facilitator: Failed to initialize; caused by: getSupported failed (500): see https://f.example/***; caused by: ECONNRESET\n",
      "loom: the database: the database at h:5432 is unavailable: connect ECONNREFUSED\n",
    ]);
  });

  it("logFailure writes the same failure once per window, then says how many it left out", () => {
    const lines = captureStderr();
    const start = 1_000_000;
    for (let i = 0; i < 5; i++) logFailure("the rate-limit store cannot be reached", new Error(`refused ${i}`), start + i);
    logFailure("another failure", new Error("its own line"), start + 5);
    logFailure("the rate-limit store cannot be reached", new Error("refused again"), start + REPEAT_WINDOW_MS);
    expect(lines).toEqual([
      "loom: the rate-limit store cannot be reached: refused 0\n",
      "loom: another failure: its own line\n",
      "loom: the rate-limit store cannot be reached (and 4 more like it since the last such line): refused again\n",
    ]);
  });

  it("a request's failure is logged with its stack, URLs redacted", () => {
    const lines = captureStderr();
    stderrLog.requestError("req_1", "/v1/chat/completions", new Error("upstream at https://rpc.example/v2/SECRET failed"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^loom: request req_1 \(\/v1\/chat\/completions\) failed: Error: upstream at https:\/\/rpc\.example\/\*\*\* failed\n    at /);
    expect(lines[0]).not.toContain("SECRET");
  });
});
