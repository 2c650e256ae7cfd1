// The background job that removes expired stored responses: reads already ignore them (response-store.ts), so this
// only gives the space back, in batches (batch-cleanup.ts).
import type { ResponseStore } from "../../adapters/responses/store.js";
import { BatchCleanup, type BatchCleanupOptions } from "./batch-cleanup.js";

/** Options of the cleanup job. */
export type ResponseCleanupOptions = BatchCleanupOptions;

/** Deletes expired responses: once soon after start(), then every interval; one run at a time. */
export class ResponseCleanup extends BatchCleanup {
  constructor(store: ResponseStore, options: ResponseCleanupOptions = {}) {
    super("expired responses", (now, limit) => store.deleteExpired(now, limit), options);
  }
}
