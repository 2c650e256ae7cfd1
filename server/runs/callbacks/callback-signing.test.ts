// A callback's signature headers: the Standard Webhooks id, timestamp (whole seconds, rounded down) and v1 signature
// of "id.timestamp.body", which the `standardwebhooks` package verifies, under this secret and for this body only.
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { newWebhookSecret } from "../../platform/store/webhook-secret-store.js";
import { signCallback } from "./callback-signing.js";

const SECRET = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
const BODY = JSON.stringify({ runId: "run_1", status: "succeeded", result: { text: "done" }, usage: { inputTokens: 1, outputTokens: 2, durationMs: 3 } });

describe("signCallback", () => {
  it("writes the content type, the id, the time in whole seconds and the v1 HMAC-SHA256 of id.time.body", () => {
    const at = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 999));
    const headers = signCallback(SECRET, "msg_1", BODY, at);
    const seconds = String(Math.floor(at.getTime() / 1000));
    expect(headers).toEqual({
      "content-type": "application/json",
      "webhook-id": "msg_1",
      "webhook-timestamp": seconds,
      "webhook-signature": `v1,${createHmac("sha256", Buffer.alloc(32, 7)).update(`msg_1.${seconds}.${BODY}`).digest("base64")}`,
    });
    expect(seconds).toBe("1767323045");
  });

  it("verifies with the standardwebhooks package under its secret, and not under another or for another body", () => {
    const headers = signCallback(SECRET, "msg_2", BODY, new Date());
    expect(new Webhook(SECRET).verify(BODY, headers)).toEqual(JSON.parse(BODY));
    expect(() => new Webhook(newWebhookSecret()).verify(BODY, headers)).toThrow(/No matching signature/);
    expect(() => new Webhook(SECRET).verify(BODY.replace("done", "dome"), headers)).toThrow(/No matching signature/);
    expect(() => new Webhook(SECRET).verify(BODY, { ...headers, "webhook-id": "msg_3" })).toThrow(/No matching signature/);
  });
});
