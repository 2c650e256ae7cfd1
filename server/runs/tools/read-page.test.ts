// read_page on pages served in this process on 127.0.0.1 (the policy allows loopback here, as a test configuration
// would): HTML to readable text with its title, plain text and Markdown as they are, other types refused, the
// output bounded; a page past the parse budget refused with a clear error; and the default policy refusing loopback.
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReadPageTool } from "./read-page.js";

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Continuous batching &amp; you</title>
  <style>body { font-family: serif }</style>
  <script>window.analytics = { track() {} };</script>
</head>
<body>
  <nav><a href="/">Home</a> | <a href="/blog">Blog</a></nav>
  <main>
    <h1>Continuous batching</h1>
    <p>Requests join the running batch at every step, as <a href="https://example.org/orca">the Orca paper</a> describes.</p>
    <img src="diagram.png" alt="a diagram">
    <ul><li>no padding</li><li>no waiting for the longest request</li></ul>
    <script>document.write("tracking pixel")</script>
  </main>
</body>
</html>`;

const signal = new AbortController().signal;

describe("read_page", () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((request, response) => {
      switch (request.url) {
        case "/article": return void response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
        case "/moved": return void response.writeHead(301, { location: "/article" }).end();
        case "/notes.md": return void response.writeHead(200, { "content-type": "text/markdown" }).end("# Notes\n\n*KV cache* blocks of 16 tokens.");
        case "/latin1": return void response.writeHead(200, { "content-type": "text/plain; charset=iso-8859-1" }).end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
        case "/long": return void response.writeHead(200, { "content-type": "text/plain" }).end("word ".repeat(10_000));
        case "/nested": return void response.writeHead(200, { "content-type": "text/html" }).end(`${"<div>".repeat(95_000)}x${"</div>".repeat(95_000)}`);
        case "/image.png": return void response.writeHead(200, { "content-type": "image/png" }).end(Buffer.alloc(10));
        default: return void response.writeHead(404, { "content-type": "text/plain" }).end("no such page");
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => new Promise((resolve) => server.close(resolve)));

  const tool = () => new ReadPageTool({ policy: { allowHosts: ["127.0.0.1"] } });

  it("turns an HTML page into its title, final URL and readable text", async () => {
    const text = await tool().run({ url: `${base}/moved` }, { signal });
    expect(text.startsWith(`Title: Continuous batching & you\nURL: ${base}/article\n\n`)).toBe(true);
    expect(text).toContain("Continuous batching\n\nRequests join the running batch at every step, as the Orca paper describes.");
    expect(text).toContain(" * no padding\n * no waiting for the longest request");
    // Scripts, styles, navigation, images and link targets are left out.
    for (const absent of ["analytics", "tracking pixel", "font-family", "Home", "diagram", "https://example.org/orca"]) expect(text).not.toContain(absent);
  });

  it("gives Markdown and plain text as they are, in their charset, and bounds the output", async () => {
    expect(await tool().run({ url: `${base}/notes.md` }, { signal })).toBe(`Title: (none)\nURL: ${base}/notes.md\n\n# Notes\n\n*KV cache* blocks of 16 tokens.`);
    expect(await tool().run({ url: `${base}/latin1` }, { signal })).toMatch(/\n\ncafé$/);
    const short = new ReadPageTool({ policy: { allowPrivate: true }, limits: { maxChars: 100 } });
    const long = await short.run({ url: `${base}/long` }, { signal });
    expect(long).toContain("Note: the text is cut at 100 of its 49999 characters.");
    expect(long.endsWith(`\n\n${"word ".repeat(20).slice(0, 100)}`)).toBe(true);
    const cut = await new ReadPageTool({ policy: { allowPrivate: true }, limits: { maxBytes: 1000 } }).run({ url: `${base}/long` }, { signal });
    expect(cut).toContain("Note: the page is longer than 1000 bytes; only its beginning was read.");
  });

  it("tells the model when a page's HTML takes longer than its budget to turn into text", async () => {
    const hurried = new ReadPageTool({ policy: { allowHosts: ["127.0.0.1"] }, limits: { parseBudgetMs: 1 } });
    await expect(hurried.run({ url: `${base}/nested` }, { signal })).rejects.toThrow(`read_page gave up on ${base}/nested: the HTML took longer than 1 ms to turn into text, so it was given up`);
    expect(await tool().run({ url: `${base}/nested` }, { signal })).toBe(`Title: (none)\nURL: ${base}/nested\n\nx`);
  });

  it("refuses other content types, error statuses, bad arguments and, by default, loopback", async () => {
    await expect(tool().run({ url: `${base}/image.png` }, { signal })).rejects.toThrow(`read_page reads HTML, plain text and Markdown; ${base}/image.png is image/png`);
    await expect(tool().run({ url: `${base}/missing` }, { signal })).rejects.toThrow(`${base}/missing answered HTTP 404`);
    await expect(tool().run({ url: 42 }, { signal })).rejects.toThrow(/read_page needs "url"/);
    await expect(new ReadPageTool().run({ url: `${base}/article` }, { signal })).rejects.toThrow(/refused: 127\.0\.0\.1 is a loopback address/);
  });
});
