// The background job that removes ended dashboard sessions: expired, signed out, or of a revoked operator token (a
// session of a revoked management key goes once it expires). find() already refuses all of these, so this only gives
// the space back, in batches (batch-cleanup.ts).
import { BatchCleanup, type BatchCleanupOptions } from "./batch-cleanup.js";
import type { DashboardSessionStore } from "./dashboard-session-store.js";

/** Deletes ended dashboard sessions: once soon after start(), then every interval (default hourly). */
export class DashboardSessionCleanup extends BatchCleanup {
  constructor(sessions: Pick<DashboardSessionStore, "deleteEnded">, options: BatchCleanupOptions = {}) {
    super("ended dashboard sessions", (now, limit) => sessions.deleteEnded(now, limit), options);
  }
}
