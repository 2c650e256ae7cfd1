// The headers of a signed callback, the Standard Webhooks way (https://www.standardwebhooks.com): the id, the time in
// seconds, and `v1,<base64 HMAC-SHA256 of "id.time.body">` computed by the `standardwebhooks` package.
import { Webhook } from "standardwebhooks";

/** The headers that sign one attempt, with the body's content type. */
export interface SignedCallbackHeaders {
  "content-type": "application/json";
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
  [header: string]: string;
}

/**
 * Headers for sending `payload` as message `webhookId` at `at`, signed with `secret` (`whsec_` + base64).
 * NOTE: each attempt is signed when it is sent: receivers refuse timestamps more than 5 minutes old, so a retry
 * carries a fresh timestamp (and signature) with the same id and body.
 */
export function signCallback(secret: string, webhookId: string, payload: string, at: Date): SignedCallbackHeaders {
  return {
    "content-type": "application/json",
    "webhook-id": webhookId,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(webhookId, at, payload),
  };
}
