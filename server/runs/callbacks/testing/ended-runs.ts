// TEST ONLY: minimal rows in `runs` (the runs store is not this folder's), for the callbacks' foreign key.
import { randomBytes } from "node:crypto";
import type { Sql } from "../../../platform/contract.js";

/** Inserts an ended legacy run of the organization (engine tim, empty request and result) and returns its id. */
export async function insertEndedRun(database: Sql, organizationId: string): Promise<string> {
  const runId = `run_${randomBytes(12).toString("hex")}`;
  await database.query(
    "INSERT INTO runs (id, kind, organization_id, engine, request, status, result, finished_at) VALUES ($1, 'legacy', $2, 'tim', '{}', 'succeeded', '{}', now())",
    [runId, organizationId],
  );
  return runId;
}

/** Inserts an ended machine run (no organization, issue 17) and returns its id. */
export async function insertEndedMachineRun(database: Sql): Promise<string> {
  const runId = `run_${randomBytes(12).toString("hex")}`;
  await database.query(
    "INSERT INTO runs (id, kind, engine, request, status, result, finished_at) VALUES ($1, 'machine_run', 'tim', '{}', 'succeeded', '{}', now())",
    [runId],
  );
  return runId;
}
