// The Hugging Face Hub's API as llama.cpp's `-hf` reads it: a repository's main branch (`/api/models/<repo>/refs`),
// then that commit's file tree with sizes and LFS SHA-256s (`/api/models/<repo>/tree/<commit>?recursive=true`, paged
// by `Link: <...>; rel="next"`); files download from `/<repo>/resolve/<commit>/<path>`. Each call has a time limit,
// and a refusal becomes an error saying what to do (a missing repository, a gated one, a token refused).
import { describeError } from "./download.js";
import type { HubFile } from "./hub-files.js";

/** Where and how to reach the Hub. */
export interface HubAccess {
  /** The Hub's address without a trailing slash (HF_ENDPOINT, else https://huggingface.co). */
  endpoint: string;
  /** A Hugging Face token (HF_TOKEN), sent as `Authorization: Bearer`. */
  token?: string;
  /** How long one API request may take (default 30 s). */
  timeoutMs?: number;
}

/** A repository's files at one commit. */
export interface HubListing {
  /** The commit the files are listed at, the one to download them from. */
  revision: string;
  files: HubFile[];
}

/** The Hub refused or could not be reached; `status` is the HTTP status of a refusal. */
export class HubError extends Error {
  override readonly name = "HubError";
  constructor(message: string, readonly status?: number, options?: ErrorOptions) {
    super(message, options);
  }
}

/** The request headers for the Hub: the token, when there is one. */
export function hubHeaders(access: HubAccess): Record<string, string> {
  return access.token ? { authorization: `Bearer ${access.token}` } : {};
}

/** The URL a repository file downloads from, at `revision`. */
export function hubFileUrl(access: HubAccess, repository: string, revision: string, path: string): string {
  return `${access.endpoint}/${repository}/resolve/${encodeURIComponent(revision)}/${path.split("/").map(encodeURIComponent).join("/")}`;
}

/**
 * What a refusal of `repository` means for the user: a 401 or 403 is a gated or private repository (set HF_TOKEN, or
 * accept its conditions), a 404 a name that does not exist (or is private). Other statuses as they are.
 */
export function describeRefusal(access: HubAccess, repository: string, status: number, detail: string): string {
  const page = `${access.endpoint}/${repository}`;
  if (status === 401) {
    return access.token
      ? `${repository}: the Hub refused the token in HF_TOKEN (HTTP 401${detail}): check that it is a valid token`
      : `${repository} is gated or private: the Hub asks for a token (HTTP 401${detail}). Accept its conditions on ${page} and set HF_TOKEN to a token of that account (https://huggingface.co/settings/tokens)`;
  }
  if (status === 403) {
    return `${repository} is gated: the token ${access.token ? "in HF_TOKEN has no access to it" : "is missing"} (HTTP 403${detail}). Accept its conditions on ${page} with the token's account${access.token ? "" : ", and set HF_TOKEN"}`;
  }
  if (status === 404) return `no repository ${repository} on ${access.endpoint} (HTTP 404${detail}): check the name${access.token ? "" : "; a private repository needs HF_TOKEN"}`;
  return `${repository}: the Hub answered HTTP ${status}${detail}`;
}

/**
 * Lists a repository's files at the head of its main branch (else its first branch).
 * @throws HubError saying what failed: the repository missing, gated or private, the Hub unreachable or too slow.
 */
export async function listHubFiles(access: HubAccess, repository: string): Promise<HubListing> {
  const refs = await getJson(access, repository, `${access.endpoint}/api/models/${repository}/refs`);
  const branches = (refs as { branches?: unknown })?.branches;
  const commits = Array.isArray(branches) ? branches.filter((branch): branch is { name: string; targetCommit: string } =>
    typeof branch?.name === "string" && typeof branch?.targetCommit === "string" && /^[0-9a-f]{40}$/.test(branch.targetCommit)) : [];
  const branch = commits.find((candidate) => candidate.name === "main") ?? commits[0];
  if (!branch) throw new HubError(`${repository}: the Hub lists no branch with a commit for it (${access.endpoint}/api/models/${repository}/refs)`);
  const files: HubFile[] = [];
  for (let url: string | undefined = `${access.endpoint}/api/models/${repository}/tree/${branch.targetCommit}?recursive=true`; url !== undefined;) {
    const { body, next } = await getPage(access, repository, url);
    if (!Array.isArray(body)) throw new HubError(`${url}: expected a list of files, got ${JSON.stringify(body)?.slice(0, 80)}`);
    for (const item of body) {
      const entry = item as { type?: unknown; path?: unknown; size?: unknown; lfs?: { oid?: unknown; size?: unknown } };
      if (entry?.type !== "file" || typeof entry.path !== "string" || !isSafePath(entry.path)) continue;
      const size = typeof entry.lfs?.size === "number" ? entry.lfs.size : entry.size;
      if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) continue;
      const oid = entry.lfs?.oid;
      files.push({ path: entry.path, size, sha256: typeof oid === "string" && /^[0-9a-f]{64}$/.test(oid) ? oid : undefined });
    }
    url = next;
  }
  return { revision: branch.targetCommit, files };
}

/** A path safe to join under the cache folder: relative, no `..`, no empty or `.` segments, no backslashes. */
function isSafePath(path: string): boolean {
  return !path.includes("\\") && path.split("/").every((segment) => segment !== "" && segment !== "." && segment !== "..");
}

async function getJson(access: HubAccess, repository: string, url: string): Promise<unknown> {
  return (await getPage(access, repository, url)).body;
}

/** GETs one JSON page, with the URL of the next one from its `Link` header. */
async function getPage(access: HubAccess, repository: string, url: string): Promise<{ body: unknown; next: string | undefined }> {
  const timeoutMs = access.timeoutMs ?? 30_000;
  let response: Response;
  let text: string;
  try {
    // NOTE: the limit covers the body as well: a Hub that stops sending mid-listing fails instead of hanging.
    response = await fetch(url, { headers: { accept: "application/json", ...hubHeaders(access) }, signal: AbortSignal.timeout(timeoutMs) });
    text = await response.text();
  } catch (error) {
    const reason = (error as Error)?.name === "TimeoutError" ? `no answer within ${timeoutMs / 1000} s` : describeError(error);
    throw new HubError(`could not reach the Hub at ${access.endpoint} (GET ${url}: ${reason})`, undefined, { cause: error });
  }
  if (!response.ok) throw new HubError(describeRefusal(access, repository, response.status, refusalDetail(text)), response.status);
  try {
    return { body: JSON.parse(text), next: nextPage(response.headers.get("link"), url) };
  } catch (error) {
    throw new HubError(`GET ${url}: the Hub's answer is not JSON (${(error as Error).message})`);
  }
}

/** `: <the Hub's error message>`, when its answer carries one (`{"error": "..."}`), cut to 200 characters. */
function refusalDetail(text: string): string {
  try {
    const message = (JSON.parse(text) as { error?: unknown })?.error;
    return typeof message === "string" && message ? `: ${message.slice(0, 200)}` : "";
  } catch {
    return "";
  }
}

/** The `rel="next"` URL of a Link header, resolved against the page's URL; only on the same origin (the token goes with it). */
function nextPage(link: string | null, base: string): string | undefined {
  const match = link === null ? null : /<([^>]+)>\s*;\s*rel="?next"?/.exec(link);
  if (!match) return undefined;
  const next = new URL(match[1], base);
  if (next.origin !== new URL(base).origin) throw new HubError(`GET ${base}: the next page of the listing is on another host (${next.origin})`);
  return next.href;
}
