// `<dataDir>/admin.json`: where a running loom server takes admin commands and the token it wants, so `loom admin`
// can reach the server that holds the data dir (PGlite admits one process). Readable by its owner only.
import { randomBytes } from "node:crypto";
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The endpoint file's name inside a data directory. */
export const ADMIN_ENDPOINT_FILE_NAME = "admin.json";

/** What admin.json holds. */
export interface AdminEndpoint {
  /** `http://127.0.0.1:PORT/admin/v1/command`: loopback only. */
  url: string;
  /** The bearer token the server wants in `Authorization: Bearer <token>`. */
  token: string;
  /** The server's pid: the file counts only while that process holds the data dir's lock. */
  pid: number;
}

/**
 * Writes `<dataDir>/admin.json` (mode 0600, replaced atomically) naming `url` and a fresh random token for this
 * process, and returns the token; the server compares each admin request's bearer token with it
 * ({@link adminTokenMatches}).
 */
export function writeAdminEndpointFile(dataDir: string, url: string): string {
  const token = randomBytes(32).toString("base64url");
  const path = join(dataDir, ADMIN_ENDPOINT_FILE_NAME);
  const partial = `${path}.${process.pid}.partial`;
  const endpoint: AdminEndpoint = { url, token, pid: process.pid };
  writeFileSync(partial, `${JSON.stringify(endpoint)}\n`, { mode: 0o600 });
  renameSync(partial, path);
  return token;
}

/** Removes `<dataDir>/admin.json` when it is this process's (a newer server's file is left alone). */
export function removeAdminEndpointFile(dataDir: string): void {
  const endpoint = readAdminEndpointFile(dataDir);
  if (endpoint !== undefined && endpoint.pid !== process.pid) return;
  rmSync(join(dataDir, ADMIN_ENDPOINT_FILE_NAME), { force: true });
}

/** The endpoint in `<dataDir>/admin.json`, or undefined when there is none or it is not one. */
export function readAdminEndpointFile(dataDir: string): AdminEndpoint | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(join(dataDir, ADMIN_ENDPOINT_FILE_NAME), "utf8"));
  } catch {
    return undefined;
  }
  const endpoint = parsed as Partial<AdminEndpoint> | null;
  if (typeof endpoint?.url !== "string" || typeof endpoint.token !== "string" || typeof endpoint.pid !== "number") return undefined;
  return { url: endpoint.url, token: endpoint.token, pid: endpoint.pid };
}
