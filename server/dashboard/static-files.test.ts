// The dashboard's front end over real HTTP: files from a built folder (a temporary one here) with their content types
// and caching, the app's index.html for its pages, 404 for missing assets and for every way of reaching outside the
// folder (sent raw, since fetch would normalise the paths), the page's security headers, and 503 or 404 in plain words
// when the front end is not built or the platform is off.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEndpoints } from "../adapters/endpoints.js";
import type { SurfaceFactory } from "../http/app.js";
import { StaticKeys } from "../http/auth.js";
import { ModelRegistry } from "../models.js";
import { type LoomServer, startServer } from "../server.js";
import { DASHBOARD_PAGE_CSP, dashboardStaticSurface, dashboardUnavailableSurface, loadDashboardFiles } from "./static-files.js";

const INDEX = '<!doctype html><html><head><script type="module" src="/dashboard/assets/index-AbCd1234.js"></script></head><body></body></html>';
const SCRIPT = "console.log('dashboard');";
const STYLE = "body { margin: 0 }";
const ICON = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 255]);

/** A server with only the given surfaces (no model, a static key). */
async function serverWith(surfaces: SurfaceFactory[]): Promise<LoomServer> {
  const registry = new ModelRegistry([]);
  return startServer({ registry, auth: new StaticKeys(["sk-test"]), endpoints: createEndpoints(registry) }, "127.0.0.1", 0, surfaces);
}

/** Sends a request line exactly as written (no normalisation) and returns the status and headers. */
function rawGet(port: number, target: string): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`));
    let text = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      const [head = "", body = ""] = text.split("\r\n\r\n");
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), head, body });
    });
  });
}

/** Sends a HEAD request line and returns the status, the head, and whatever came after it within 200 ms (nothing should). */
function rawHead(port: number, target: string): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(`HEAD ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`));
    let text = "";
    let waiting: NodeJS.Timeout | undefined;
    const done = () => {
      socket.destroy();
      const split = text.indexOf("\r\n\r\n");
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]), head: text.slice(0, split), body: text.slice(split + 4) });
    };
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      text += chunk;
      if (text.includes("\r\n\r\n")) waiting ??= setTimeout(done, 200);
    });
    socket.on("error", reject);
    socket.on("close", () => waiting ?? done());
  });
}

/** Sends `lines` ("METHOD /path") on one kept-alive connection, one after the other's answer, and returns the answers. */
function rawRequests(port: number, lines: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const answers: string[] = [];
    let text = "";
    const socket = connect(port, "127.0.0.1");
    const next = () => {
      const line = lines[answers.length]!;
      const last = answers.length === lines.length - 1;
      socket.write(`${line} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${last ? "Connection: close\r\n" : ""}\r\n`);
    };
    socket.on("connect", next);
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      text += chunk;
      // The first answer is complete at the end of its head (it has no body): send the second.
      if (answers.length === 0 && text.includes("\r\n\r\n")) {
        answers.push(text);
        text = "";
        next();
      }
    });
    socket.on("error", reject);
    socket.on("close", () => resolve([...answers, text]));
  });
}

/** A raw response head's headers by lower-case name. */
function headerMap(head: string): Record<string, string> {
  return Object.fromEntries(head.split("\r\n").slice(1).map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
}

describe("the dashboard's static files", () => {
  let folder: string;
  let outside: string;
  let server: LoomServer;
  let base: string;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), "loom-dashboard-"));
    outside = mkdtempSync(join(tmpdir(), "loom-outside-"));
    writeFileSync(join(outside, "secret.txt"), "secret");
    mkdirSync(join(folder, "assets"));
    writeFileSync(join(folder, "index.html"), INDEX);
    writeFileSync(join(folder, "assets", "index-AbCd1234.js"), SCRIPT);
    writeFileSync(join(folder, "assets", "index-Xy_z9876.css"), STYLE);
    writeFileSync(join(folder, "favicon.png"), ICON);
    writeFileSync(join(folder, ".env"), "hidden");
    symlinkSync(join(outside, "secret.txt"), join(folder, "linked.txt"));
    symlinkSync(outside, join(folder, "linked-folder"));
    const files = loadDashboardFiles(folder);
    expect(files.available).toBe(true);
    server = await serverWith([dashboardStaticSurface(files)]);
    base = `http://127.0.0.1:${server.port}`;
  });
  afterAll(() => {
    server?.close();
    rmSync(folder, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it("reads regular files only: no dot-files, no links out of the folder", () => {
    const files = loadDashboardFiles(folder);
    if (!files.available) throw new Error(files.reason);
    expect([...files.files.keys()].sort()).toEqual(["assets/index-AbCd1234.js", "assets/index-Xy_z9876.css", "favicon.png", "index.html"]);
  });

  it("redirects /dashboard to /dashboard/ and serves index.html there with the page's security headers", async () => {
    const redirect = await fetch(`${base}/dashboard`, { redirect: "manual" });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get("location")).toBe("/dashboard/");
    const page = await fetch(`${base}/dashboard/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toBe(INDEX);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toBe(DASHBOARD_PAGE_CSP);
    expect(DASHBOARD_PAGE_CSP).toBe("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'");
    expect(DASHBOARD_PAGE_CSP).not.toContain("unsafe");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    expect(page.headers.get("cache-control")).toBe("no-cache");
  });

  it("serves assets with their content types; hashed ones cached for a year, others revalidated", async () => {
    const cases: Array<[string, string, string, string | Buffer]> = [
      ["/dashboard/assets/index-AbCd1234.js", "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", SCRIPT],
      ["/dashboard/assets/index-Xy_z9876.css", "text/css; charset=utf-8", "public, max-age=31536000, immutable", STYLE],
      ["/dashboard/favicon.png", "image/png", "no-cache", ICON],
    ];
    for (const [path, type, cache, content] of cases) {
      const response = await fetch(`${base}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type"), path).toBe(type);
      expect(response.headers.get("cache-control"), path).toBe(cache);
      expect(response.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(Buffer.from(await response.arrayBuffer()).equals(Buffer.from(content)), path).toBe(true);
    }
  });

  it("answers 304 to a matching If-None-Match", async () => {
    const first = await fetch(`${base}/dashboard/`);
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const again = await fetch(`${base}/dashboard/`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    expect((await fetch(`${base}/dashboard/`, { headers: { "if-none-match": '"other"' } })).status).toBe(200);
  });

  it("gives the app's pages index.html, and a missing asset or file 404", async () => {
    for (const path of ["/dashboard/keys", "/dashboard/runs/run_123", "/dashboard/operator/organizations/", "/dashboard/usage?days=30"]) {
      const response = await fetch(`${base}${path}`);
      expect(response.status, path).toBe(200);
      expect(await response.text(), path).toBe(INDEX);
    }
    for (const path of ["/dashboard/assets/missing-AbCd1234.js", "/dashboard/assets/page", "/dashboard/robots.txt", "/dashboard/.env", "/dashboard/linked.txt"]) {
      const response = await fetch(`${base}${path}`);
      expect(response.status, path).toBe(404);
      expect(response.headers.get("content-type"), path).toBe("text/plain; charset=utf-8");
      expect(response.headers.get("content-security-policy"), path).toBe(DASHBOARD_PAGE_CSP);
    }
  });

  it("refuses every way out of the folder with 404, never its index.html or another file", async () => {
    const attempts = [
      "/dashboard/../package.json",
      "/dashboard/assets/../../secret.txt",
      "/dashboard/%2e%2e/package.json",
      "/dashboard/%2E%2E%2Fpackage.json",
      "/dashboard/assets/%2e%2e%2f%2e%2e%2fsecret.txt",
      "/dashboard/..%5cpackage.json",
      "/dashboard/assets\\..\\..\\package.json",
      "/dashboard/%5c..%5cpackage.json",
      "/dashboard/index.html%00.js",
      "/dashboard/%00",
      "/dashboard/./index.html",
      "/dashboard/assets//index-AbCd1234.js",
      "/dashboard/linked-folder/secret.txt",
      "/dashboard/%ff",
      `/dashboard/${"%2e%2e/".repeat(10)}etc/passwd`,
    ];
    for (const target of attempts) {
      const { status, body } = await rawGet(server.port, target);
      // uWS itself may refuse a request line it cannot parse (400); either way nothing is served.
      expect([400, 404], target).toContain(status);
      expect(body, target).not.toContain("<!doctype html>");
      expect(body, target).not.toContain("secret");
      expect(body, target).not.toContain('"name"');
    }
  });

  it("answers HEAD as GET without the body: same status and headers, the GET's Content-Length", async () => {
    for (const [path, status] of [["/dashboard/", 200], ["/dashboard/keys", 200], ["/dashboard/assets/index-AbCd1234.js", 200], ["/dashboard/favicon.png", 200], ["/dashboard/assets/missing-AbCd1234.js", 404], ["/dashboard", 301]] as const) {
      const get = await fetch(`${base}${path}`, { redirect: "manual" });
      const getBody = Buffer.from(await get.arrayBuffer());
      const head = await rawHead(server.port, path);
      expect(head.status, path).toBe(status);
      expect(get.status, path).toBe(status);
      // Nothing after the head: a body would be read as the next response on a kept-alive connection.
      expect(head.body, path).toBe("");
      expect(head.head.match(/^content-length:/gim), path).toHaveLength(1);
      const headers = headerMap(head.head);
      expect(headers["content-length"], path).toBe(String(getBody.length));
      for (const name of ["content-type", "cache-control", "etag", "content-security-policy", "x-content-type-options", "location"]) {
        expect(headers[name] ?? null, `${path} ${name}`).toBe(get.headers.get(name));
      }
    }
    const etag = (await fetch(`${base}/dashboard/`)).headers.get("etag")!;
    expect((await fetch(`${base}/dashboard/`, { method: "HEAD", headers: { "if-none-match": etag } })).status).toBe(304);
    // The connection serves the next request after a HEAD.
    const [first, second] = await rawRequests(server.port, ["HEAD /dashboard/", "GET /dashboard/assets/index-AbCd1234.js"]);
    expect(first).toMatch(/^HTTP\/1\.1 200 /);
    expect(second).toMatch(/^HTTP\/1\.1 200 [\s\S]*\r\n\r\nconsole\.log\('dashboard'\);$/);
  });

  it("answers other methods 405 in the `{error}` shape", async () => {
    const response = await fetch(`${base}/dashboard/`, { method: "POST" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD");
    expect(await response.json()).toEqual({ error: expect.stringContaining("POST is not allowed") });
  });
});

describe("the dashboard when it cannot be served", () => {
  it("answers 503 saying to run npm run build when the front end is not built", async () => {
    const missing = loadDashboardFiles(join(tmpdir(), "loom-no-such-dashboard"));
    expect(missing).toMatchObject({ available: false, reason: expect.stringContaining("is missing") });
    const server = await serverWith([dashboardStaticSurface(missing)]);
    try {
      for (const path of ["/dashboard/", "/dashboard/keys", "/dashboard/assets/index-AbCd1234.js"]) {
        const response = await fetch(`http://127.0.0.1:${server.port}${path}`);
        expect(response.status, path).toBe(503);
        expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
        expect(await response.text()).toMatch(/the dashboard is not built .*: run `npm run build`/);
        const head = await fetch(`http://127.0.0.1:${server.port}${path}`, { method: "HEAD" });
        expect([head.status, await head.text()], `HEAD ${path}`).toEqual([503, ""]);
      }
    } finally {
      server.close();
    }
  });

  it("refuses a folder without index.html, or over the size bound", () => {
    const folder = mkdtempSync(join(tmpdir(), "loom-dashboard-"));
    try {
      writeFileSync(join(folder, "app.js"), "x".repeat(2048));
      expect(loadDashboardFiles(folder)).toMatchObject({ available: false, reason: expect.stringContaining("has no index.html") });
      writeFileSync(join(folder, "index.html"), INDEX);
      expect(loadDashboardFiles(folder).available).toBe(true);
      expect(loadDashboardFiles(folder, 1024)).toMatchObject({ available: false, reason: expect.stringContaining("is refused: it holds more than") });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("says the dashboard needs the platform where there is none, 404", async () => {
    const server = await serverWith([dashboardUnavailableSurface("the web dashboard needs the platform")]);
    try {
      for (const path of ["/dashboard", "/dashboard/", "/dashboard/keys"]) {
        const response = await fetch(`http://127.0.0.1:${server.port}${path}`, { redirect: "manual" });
        expect(response.status, path).toBe(404);
        expect(await response.text()).toBe("the web dashboard needs the platform\n");
        const head = await fetch(`http://127.0.0.1:${server.port}${path}`, { method: "HEAD", redirect: "manual" });
        expect([head.status, head.headers.get("content-length"), await head.text()], `HEAD ${path}`).toEqual([404, String(Buffer.byteLength("the web dashboard needs the platform\n")), ""]);
      }
    } finally {
      server.close();
    }
  });
});
