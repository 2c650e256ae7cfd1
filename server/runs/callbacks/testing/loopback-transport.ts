// TEST ONLY: a callback transport on node:http that talks to 127.0.0.1 and nothing else. The service sends callbacks
// through its SSRF-guarded client; this one exists so the deliverer's tests need no network and no guard.
import { request } from "node:http";
import type { CallbackPost } from "../callback-transport.js";

/**
 * POSTs to an `http://127.0.0.1:PORT/...` URL and resolves with the status once the response head arrives; refuses
 * every other URL (so a test can never call out), and rejects when `signal` aborts.
 */
export const loopbackOnlyPostForTests: CallbackPost = ({ url, headers, body, signal }) =>
  new Promise((resolve, reject) => {
    const target = new URL(url);
    if (target.protocol !== "http:" || target.hostname !== "127.0.0.1") {
      reject(new Error(`the test transport only posts to http://127.0.0.1, not ${target.origin}`));
      return;
    }
    const outgoing = request(target, { method: "POST", headers: { ...headers, "content-length": Buffer.byteLength(body) }, signal }, (response) => {
      response.resume();
      resolve({ status: response.statusCode ?? 0 });
    });
    outgoing.on("error", reject);
    outgoing.end(body);
  });
