// The software updates' records (migration 10): the operator's approvals of releases, and the audit trail of every
// check, approval, apply and rollback. Written by `loom update`, through a running server when it holds the data dir.
import { type Database, PlatformInputError } from "../contract.js";
import { requireChoice, requireName } from "./validate.js";

/** What an update event was. */
export const UPDATE_ACTIONS = ["check", "approve", "apply", "rollback"] as const;
export type UpdateAction = (typeof UPDATE_ACTIONS)[number];

/** How it ended: done, refused before anything changed, failed, or failed and rolled back by itself. */
export const UPDATE_OUTCOMES = ["ok", "refused", "failed", "rolled-back"] as const;
export type UpdateOutcome = (typeof UPDATE_OUTCOMES)[number];

/** One audit record. */
export interface UpdateEvent {
  id: number;
  at: Date;
  action: UpdateAction;
  outcome: UpdateOutcome;
  fromVersion: string | null;
  toVersion: string | null;
  /** Who: the operator's name as given, or user@host. */
  actor: string;
  /** What happened, in words (the error on a failure). */
  detail: string;
}

/** A new record (id and time are the database's). */
export type NewUpdateEvent = Omit<UpdateEvent, "id" | "at">;

/** An approval of one release's package. */
export interface UpdateApproval {
  version: string;
  packageSha256: string;
  approvedBy: string;
  approvedAt: Date;
}

/** The most records history() returns. */
export const MAX_UPDATE_HISTORY = 1000;
/** Longer details are cut (an error message with a log tail stays readable, a runaway does not fill the table). */
export const MAX_DETAIL_CHARACTERS = 4000;

const SHA256 = /^[0-9a-f]{64}$/;

type EventRow = { id: string | number; at: Date; action: UpdateAction; outcome: UpdateOutcome; from_version: string | null; to_version: string | null; actor: string; detail: string };

/** Approvals and audit records in the platform's database. */
export class UpdateLedger {
  constructor(private readonly database: Database) {}

  /**
   * Records that `approvedBy` approved `version`'s package `packageSha256` (idempotent: the first approval stands).
   * @returns the approval as stored.
   */
  async approve(version: string, packageSha256: string, approvedBy: string): Promise<UpdateApproval> {
    requireName("version", version);
    requireName("approvedBy", approvedBy);
    requirePackageSha256("packageSha256", packageSha256);
    await this.database.query(
      "INSERT INTO update_approvals (version, package_sha256, approved_by) VALUES ($1, $2, $3) ON CONFLICT (version, package_sha256) DO NOTHING",
      [version, packageSha256, approvedBy],
    );
    return (await this.approval(version, packageSha256))!;
  }

  /** The approval of `version`'s package with this SHA-256, if any. */
  async approval(version: string, packageSha256: string): Promise<UpdateApproval | undefined> {
    const [row] = await this.database.query<{ version: string; package_sha256: string; approved_by: string; approved_at: Date }>(
      "SELECT version, package_sha256, approved_by, approved_at FROM update_approvals WHERE version = $1 AND package_sha256 = $2",
      [version, packageSha256],
    );
    return row && { version: row.version, packageSha256: row.package_sha256, approvedBy: row.approved_by, approvedAt: new Date(row.approved_at) };
  }

  /** Every approval, newest first (operators approve a handful: bounded by MAX_UPDATE_HISTORY). */
  async approvals(): Promise<UpdateApproval[]> {
    const rows = await this.database.query<{ version: string; package_sha256: string; approved_by: string; approved_at: Date }>(
      "SELECT version, package_sha256, approved_by, approved_at FROM update_approvals ORDER BY approved_at DESC LIMIT $1",
      [MAX_UPDATE_HISTORY],
    );
    return rows.map((row) => ({ version: row.version, packageSha256: row.package_sha256, approvedBy: row.approved_by, approvedAt: new Date(row.approved_at) }));
  }

  /** Appends an audit record. @returns it as stored. */
  async record(event: NewUpdateEvent): Promise<UpdateEvent> {
    requireChoice("action", event.action, UPDATE_ACTIONS);
    requireChoice("outcome", event.outcome, UPDATE_OUTCOMES);
    requireName("actor", event.actor);
    const [row] = await this.database.query<EventRow>(
      `INSERT INTO update_events (action, outcome, from_version, to_version, actor, detail) VALUES ($1, $2, $3, $4, $5, $6)
       RETURNING id, at, action, outcome, from_version, to_version, actor, detail`,
      [event.action, event.outcome, event.fromVersion, event.toVersion, event.actor, event.detail.slice(0, MAX_DETAIL_CHARACTERS)],
    );
    return eventOf(row!);
  }

  /** The newest `limit` records, newest first. */
  async history(limit = 100): Promise<UpdateEvent[]> {
    const rows = await this.database.query<EventRow>(
      "SELECT id, at, action, outcome, from_version, to_version, actor, detail FROM update_events ORDER BY id DESC LIMIT $1",
      [Math.min(Math.max(1, limit), MAX_UPDATE_HISTORY)],
    );
    return rows.map(eventOf);
  }
}

/** A package's SHA-256: 64 lowercase hex digits. @throws PlatformInputError naming `field`. */
export function requirePackageSha256(field: string, value: unknown): string {
  if (typeof value !== "string" || !SHA256.test(value)) throw new PlatformInputError(field, `${field} must be 64 lowercase hex digits (a package's SHA-256), got ${JSON.stringify(value)?.slice(0, 80)}`);
  return value;
}

function eventOf(row: EventRow): UpdateEvent {
  return { id: Number(row.id), at: new Date(row.at), action: row.action, outcome: row.outcome, fromVersion: row.from_version, toVersion: row.to_version, actor: row.actor, detail: row.detail };
}
