// @ts-check
// The thread html-text.ts reads HTML on: says {ready: true} once loaded, then answers each {id, html} with
// {id, title, text} or {id, error}. A page that takes too long is not interrupted here: the main thread terminates
// this thread. Plain JavaScript: workers cannot load TypeScript when tests run the sources.
import { parentPort } from "node:worker_threads";
import { extractReadableHtml } from "./readable-html.js";

const port = parentPort;
if (!port) throw new Error("html-text-worker.js runs as a worker thread (started by html-text.ts)");
port.on("message", (/** @type {{ id: number, html: string }} */ { id, html }) => {
  try {
    port.postMessage({ id, ...extractReadableHtml(html) });
  } catch (error) {
    port.postMessage({ id, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
  }
});
port.postMessage({ ready: true });
