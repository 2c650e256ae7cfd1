// The config file is checked field by field: every mistake stops `loom serve` at start with the field named.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { UsageError } from "../../engine/cli/arguments.js";
import { readServeConfig } from "./config.js";

const dir = mkdtempSync(join(tmpdir(), "loom-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
function configFile(content: unknown): string {
  const path = join(dir, `config-${files++}.json`);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

describe("readServeConfig", () => {
  it("accepts every documented field", () => {
    const config = {
      apiKeys: ["sk-1"], maxQueue: 1, maxBodyBytes: 1024 * 1024, maxBufferedBodyBytes: 64 * 1024 * 1024, bodyTimeoutSeconds: 2.5, jsonWhitespace: "pretty",
      maxImagesPerRequest: 0, maxImageBytes: 1024, maxImagePixels: 1_000_000,
      models: [{ path: "m.gguf", slugs: { openai: ["a"], anthropic: ["b"] }, contextSize: 2048, maxSequences: 8, kvCache: { bytes: 1 << 20, dtype: "f16" }, stepTargetMs: 0, backgroundStepMs: 10 }],
      runs: {
        concurrency: 2, leaseSeconds: 10, searchUrl: "http://127.0.0.1:8888", network: { allowPrivate: false, allowHosts: ["search.internal"] },
        engines: { tim: { model: "a", thinking: true, maxSteps: 3, maxToolCalls: 4, maxStepTokens: 256, forcedToolTurns: 2, temperature: 0 }, "tim-1.5": { model: null } },
      },
      responses: { retentionDays: 0.5 },
      updates: { feed: "https://releases.example/loom", trustedKeys: ["keys/release-key.pub.pem"] },
      trustedProxies: ["10.0.0.0/8", "192.168.1.7", "fd00::/8", "::1", "::ffff:172.16.0.0/108"],
    };
    expect(readServeConfig(configFile(config))).toEqual(config);
    expect(readServeConfig(undefined)).toEqual({});
  });

  it("refuses trustedProxies entries that are no address or CIDR range, naming the field and the entry", () => {
    for (const [value, message] of [
      ["10.0.0.0/8", /trustedProxies must be an array of up to 1000 IP addresses/],
      [["10.0.0.0/33"], /trustedProxies .*"10\.0\.0\.0\/33" has a prefix length outside 0-32/],
      [["fd00::/129"], /"fd00::\/129" has a prefix length outside 0-128/],
      [["proxy.internal"], /"proxy\.internal" is not an IPv4 or IPv6 address or CIDR range/],
      [["10.1"], /"10\.1" is not an IPv4/], // inet_aton shorthand: too easy to misread
      [["10.0.0.0/x"], /prefix length/],
      [[7], /7 is not one/],
    ] as const) {
      expect(() => readServeConfig(configFile({ trustedProxies: value })), JSON.stringify(value)).toThrow(message);
    }
  });

  it("takes a relative updates.installDir as the config file's, so serve and update agree from any folder", () => {
    expect(readServeConfig(configFile({ updates: { installDir: "install" } })).updates?.installDir).toBe(join(dir, "install"));
    expect(readServeConfig(configFile({ updates: { installDir: "/opt/loom" } })).updates?.installDir).toBe("/opt/loom");
  });

  it("resolves payments into the machine endpoints' settings", () => {
    const payments = { payTo: "0x1111111111111111111111111111111111111111", network: "base-sepolia", settlement: { mode: "facilitator", url: "http://127.0.0.1:4021" } };
    const config = readServeConfig(configFile({ payments }));
    expect(config.payments).toEqual(payments);
    expect(config.paymentSettings).toMatchObject({ network: { caip2: "eip155:84532" }, prices: { search: { atomic: 100_000n }, run: { atomic: 500_000n } } });
  });

  it.each([
    [{ maxQueue: -1 }, /maxQueue must be an integer >= 1, got -1/],
    [{ maxQueue: 0 }, /maxQueue must be an integer >= 1, got 0/],
    [{ maxBufferedBodyBytes: 4096 }, /maxBufferedBodyBytes \(4096\) must be at least maxBodyBytes \(8388608, the default\)/],
    [{ maxBodyBytes: 512 * 1024 * 1024 }, /maxBodyBytes must be an integer from 1024 to 268435456/],
    [{ maxBodyBytes: "8MB" }, /maxBodyBytes must be an integer from 1024 to \d+, got "8MB"/],
    [{ maxBodyBytes: 0 }, /maxBodyBytes must be/],
    [{ bodyTimeoutSeconds: 0 }, /bodyTimeoutSeconds must be a number in \(0, 3600\]/],
    [{ maxBodyBytes: 4096, maxBufferedBodyBytes: 2048 }, /maxBufferedBodyBytes \(2048\) must be at least maxBodyBytes \(4096\)/],
    [{ apiKeys: "sk-1" }, /apiKeys must be an array of non-empty strings/],
    [{ jsonWhitespace: "indented" }, /jsonWhitespace must be one of "compact", "pretty"/],
    [{ apiKey: ["sk-1"] }, /apiKey is not a config field \(known: apiKeys, /],
    [{ models: [] }, /models must be a non-empty array/],
    [{ models: [{ contextSize: 512 }] }, /models\[0\]\.path is required/],
    [{ models: [{ path: "m", contextSize: "4k" }] }, /models\[0\]\.contextSize must be an integer >= 16, got "4k"/],
    [{ models: [{ path: "m", kvCache: { bytes: 1, memoryFraction: 0.5 } }] }, /models\[0\]\.kvCache\.bytes and models\[0\]\.kvCache\.memoryFraction: give one/],
    [{ models: [{ path: "m", kvCache: { memoryFraction: 1.5 } }] }, /models\[0\]\.kvCache\.memoryFraction must be a number in \(0, 1\]/],
    [{ models: [{ path: "m", kvCache: { dtype: "q8" } }] }, /models\[0\]\.kvCache\.dtype must be one of "f32", "f16"/],
    [{ models: [{ path: "m", slugs: { openai: "x" } }] }, /models\[0\]\.slugs\.openai must be an array/],
    [{ models: [{ path: "m", slug: ["x"] }] }, /models\[0\]\.slug is not a config field/],
    [{ models: [{ path: "m", stepTargetMs: -5 }] }, /models\[0\]\.stepTargetMs must be an integer from 0 to 60000/],
    [{ maxImagesPerRequest: -1 }, /maxImagesPerRequest must be an integer from 0 to 1000, got -1/],
    [{ maxImageBytes: "20MB" }, /maxImageBytes must be an integer from 1024 to 268435456, got "20MB"/],
    [{ maxImagePixels: 0 }, /maxImagePixels must be an integer from 1 to 268402689, got 0/],
    [{ runs: { concurrency: 0 } }, /runs\.concurrency must be an integer from 1 to 256, got 0/],
    [{ runs: { engines: { "tim-9": {} } } }, /runs\.engines\.tim-9 is not a config field \(known: tim, tim-edge/],
    [{ runs: { engines: { tim: { maxSteps: 0 } } } }, /runs\.engines\.tim\.maxSteps must be an integer from 1 to 100/],
    [{ runs: { engines: { tim: { model: 3 } } } }, /runs\.engines\.tim\.model must be a served model's chat-completions slug, or null/],
    [{ runs: { engines: { tim: { thinking: "yes" } } } }, /runs\.engines\.tim\.thinking must be true or false/],
    [{ runs: { network: { allowHosts: [""] } } }, /runs\.network\.allowHosts must be an array of non-empty strings/],
    [{ runs: { searchUrl: "searx.local" } }, /runs\.searchUrl must be an http:\/\/ or https:\/\/ URL/],
    [{ responses: { retentionDays: 0 } }, /responses\.retentionDays must be a number in \(0, 3650\]/],
    [{ responses: { ttl: 3 } }, /responses\.ttl is not a config field/],
    [{ updates: { trustedKeys: "key.pem" } }, /updates\.trustedKeys must be an array of non-empty strings, got "key\.pem"/],
    [{ updates: { trustedKeys: [""] } }, /updates\.trustedKeys must be an array of non-empty strings/],
    [{ updates: { feed: 3 } }, /updates\.feed must be a non-empty string, got 3/],
    [{ updates: { trustedKey: [] } }, /updates\.trustedKey is not a config field \(known: feed, trustedKeys, policy, window, installDir, drainSeconds, healthTimeoutSeconds\)/],
    [{ updates: [] }, /updates must be an object/],
    [{ payments: [] }, /payments must be an object: \{ payTo, network, settlement, ... \}/],
    [{ payments: { settlement: { mode: "facilitator", url: "http://127.0.0.1:1" } } }, /--config .*: payments\.payTo is required/],
    [{ payments: { payTo: "0x1111111111111111111111111111111111111111", settlement: { mode: "direct" } } }, /payments\.settlement\.relayerKey is required in direct mode/],
    [[1], /must be a JSON object/],
    ["{ not json", /--config .*config-\d+\.json: /],
  ])("refuses %j naming the field", (content, message) => {
    const path = configFile(content);
    expect(() => readServeConfig(path)).toThrow(UsageError);
    expect(() => readServeConfig(path)).toThrow(message);
  });
});
