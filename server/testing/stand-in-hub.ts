// A stand-in for the Hugging Face Hub on loopback, for tests of `hf:` models: the API calls llama.cpp's `-hf` makes
// (`/api/models/<repo>/refs`, `/api/models/<repo>/tree/<commit>?recursive=true` with LFS sizes and SHA-256s, paged
// by a Link header) and file downloads (`/<repo>/resolve/<commit>/<path>`, redirected to a file store on another
// origin that honours Range requests), with gated repositories, and faults on demand: a download cut short once, bytes other than listed.
import { createHash } from "node:crypto";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A repository: its files by path. */
export interface StandInRepository {
  files: Record<string, Buffer>;
  /** Downloads need `Authorization: Bearer <token>` (401 without one, 403 with another token). */
  gatedToken?: string;
}

/** One request the stand-in received. */
export interface StandInRequest {
  url: string;
  authorization: string | undefined;
  range: string | undefined;
}

/** A running stand-in Hub. */
export interface StandInHub {
  /** `http://127.0.0.1:<port>`: HF_ENDPOINT for the code under test (the file store listens on another port). */
  endpoint: string;
  requests: StandInRequest[];
  /** Requests for file bytes (the file store's, after the redirect). */
  downloads(): StandInRequest[];
  /** The next download of `path` sends `bytes` bytes, then the connection drops. */
  cutNextDownload(path: string, bytes: number): void;
  /** Downloads of `path` send these bytes instead of the listed file's (same size: a corrupted store). */
  corrupt(path: string, bytes: Buffer): void;
  close(): Promise<void>;
}

/** The commit every stand-in repository's main branch points at. */
export const STAND_IN_COMMIT = "0123456789abcdef0123456789abcdef01234567";

/** Starts a stand-in Hub serving `repositories` (by `<org>/<repo>`); `pageSize` pages the tree listing. */
export async function startStandInHub(repositories: Record<string, StandInRepository>, options: { pageSize?: number } = {}): Promise<StandInHub> {
  const requests: StandInRequest[] = [];
  const cuts = new Map<string, number>();
  const corrupted = new Map<string, Buffer>();
  const pageSize = options.pageSize ?? 1000;
  const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body);
    response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
    response.end(text);
  };
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    requests.push({ url: request.url!, authorization: request.headers.authorization, range: request.headers.range });
    const url = new URL(request.url!, "http://stand-in");
    const api = /^\/api\/models\/([^/]+\/[^/]+)\/(refs|tree\/([0-9a-f]{40}))$/.exec(url.pathname);
    if (api) {
      const repository = repositories[api[1]];
      if (!repository) return json(response, 404, { error: "Repository not found" });
      if (api[2] === "refs") return json(response, 200, { branches: [{ name: "main", ref: "refs/heads/main", targetCommit: STAND_IN_COMMIT }], converts: [], tags: [] });
      if (api[3] !== STAND_IN_COMMIT) return json(response, 404, { error: "Invalid rev id" });
      const entries = [
        { type: "directory", oid: "d".repeat(40), size: 0, path: "extras" },
        ...Object.entries(repository.files).map(([path, bytes]) => ({
          type: "file", oid: createHash("sha1").update(bytes).digest("hex"), size: bytes.length, path,
          lfs: { oid: createHash("sha256").update(bytes).digest("hex"), size: bytes.length, pointerSize: 134 },
        })),
      ];
      const start = Number(url.searchParams.get("cursor") ?? 0);
      const next: Record<string, string> = start + pageSize < entries.length ? { link: `<${url.pathname}?recursive=true&cursor=${start + pageSize}>; rel="next"` } : {};
      return json(response, 200, entries.slice(start, start + pageSize), next);
    }
    const resolve = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
    if (resolve) {
      const repository = repositories[resolve[1]];
      const path = decodeURIComponent(resolve[3]);
      if (!repository || resolve[2] !== STAND_IN_COMMIT || !repository.files[path]) return json(response, 404, { error: "Entry not found" });
      if (repository.gatedToken !== undefined && request.headers.authorization !== `Bearer ${repository.gatedToken}`) {
        return json(response, request.headers.authorization ? 403 : 401, { error: `Access to model ${resolve[1]} is restricted.` });
      }
      // The Hub sends LFS files from a store on another origin (here another port): fetch follows, keeping the
      // Range header and dropping the token.
      response.writeHead(302, { location: `${storeOrigin}/store/${encodeURIComponent(resolve[1])}/${encodeURIComponent(path)}` });
      return response.end();
    }
    const store = /^\/store\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (store) {
      const path = decodeURIComponent(store[2]);
      const listed = repositories[decodeURIComponent(store[1])]?.files[path];
      if (!listed) return json(response, 404, { error: "no such blob" });
      const bytes = corrupted.get(path) ?? listed;
      const match = /^bytes=(\d+)-$/.exec(request.headers.range ?? "");
      const from = match ? Number(match[1]) : 0;
      if (from >= bytes.length && match) {
        response.writeHead(416, { "content-range": `bytes */${bytes.length}` });
        return response.end();
      }
      const body = bytes.subarray(from);
      response.writeHead(match ? 206 : 200, { "content-length": body.length, ...(match ? { "content-range": `bytes ${from}-${bytes.length - 1}/${bytes.length}` } : {}) });
      const cut = cuts.get(path);
      if (cut !== undefined) {
        cuts.delete(path);
        // The connection drops a moment after the bytes: time for the client to write them down, as on a real cut.
        response.write(body.subarray(0, cut), () => setTimeout(() => response.socket?.destroy(), 200));
        return;
      }
      return response.end(body);
    }
    json(response, 404, { error: "not a stand-in route" });
  };
  const servers: Server[] = [createServer(handle), createServer(handle)];
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))));
  const [endpoint, storeOrigin] = servers.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return {
    endpoint,
    requests,
    downloads: () => requests.filter((request) => request.url.startsWith("/store/")),
    cutNextDownload: (path, bytes) => cuts.set(path, bytes),
    corrupt: (path, bytes) => corrupted.set(path, bytes),
    close: async () => {
      await Promise.all(servers.map((server) => new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })));
    },
  };
}
