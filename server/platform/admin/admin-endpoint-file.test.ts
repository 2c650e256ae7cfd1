// admin.json: written for the owner only, read back, and removed only by the process that wrote it.
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { temporaryDataDir } from "../testing/test-databases.js";
import { adminTokenMatches } from "./admin-request.js";
import { ADMIN_ENDPOINT_FILE_NAME, readAdminEndpointFile, removeAdminEndpointFile, writeAdminEndpointFile } from "./admin-endpoint-file.js";

describe("the admin endpoint file", () => {
  const dataDir = temporaryDataDir();
  const path = join(dataDir, ADMIN_ENDPOINT_FILE_NAME);
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("holds the URL, a fresh 32-byte token and the pid, readable by its owner only", () => {
    const token = writeAdminEndpointFile(dataDir, "http://127.0.0.1:9/admin/v1/command");
    expect(Buffer.from(token, "base64url").length).toBe(32);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readAdminEndpointFile(dataDir)).toEqual({ url: "http://127.0.0.1:9/admin/v1/command", token, pid: process.pid });
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ url: "http://127.0.0.1:9/admin/v1/command", token, pid: process.pid });
    expect(writeAdminEndpointFile(dataDir, "http://127.0.0.1:9/admin/v1/command")).not.toBe(token);
    expect(adminTokenMatches(`Bearer ${readAdminEndpointFile(dataDir)!.token}`, readAdminEndpointFile(dataDir)!.token)).toBe(true);
    expect(adminTokenMatches(`Bearer ${token}`, readAdminEndpointFile(dataDir)!.token)).toBe(false);
    expect(adminTokenMatches(undefined, token)).toBe(false);
  });

  it("is removed by its writer, and left alone when another process wrote it", () => {
    writeAdminEndpointFile(dataDir, "http://127.0.0.1:9/admin/v1/command");
    const theirs = { ...readAdminEndpointFile(dataDir)!, pid: process.pid + 1 };
    writeFileSync(path, JSON.stringify(theirs));
    removeAdminEndpointFile(dataDir);
    expect(readAdminEndpointFile(dataDir)).toEqual(theirs);
    writeAdminEndpointFile(dataDir, "http://127.0.0.1:9/admin/v1/command");
    removeAdminEndpointFile(dataDir);
    expect(readAdminEndpointFile(dataDir)).toBeUndefined();
    writeFileSync(path, "{not json");
    expect(readAdminEndpointFile(dataDir)).toBeUndefined();
  });
});
