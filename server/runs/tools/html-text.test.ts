// HTML to readable text on worker threads: what a reader sees of a page, hostile pages (deep nesting, a flood of
// paragraphs) read while the main thread's event loop keeps turning, and the time budget ending a thread.
import { performance } from "node:perf_hooks";
import { afterAll, describe, expect, it } from "vitest";
import { HtmlTextError, HtmlTextReader, readableHtml } from "./html-text.js";

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Paged attention &mdash; notes</title>
<style>p { color: red }</style><script>window.track = () => "tracking";</script></head>
<body>
<header><nav><ul><li><a href="/">Home</a></li><li><a href="/docs">Docs</a></li></ul></nav></header>
<main><article>
<h1>Paged   attention</h1>
<p>The KV cache is split into <strong>blocks</strong> of 16 tokens; a <em>block table</em> maps
positions to blocks. See <a href="https://arxiv.org/abs/2309.06180">the vLLM paper</a>.</p>
<h2>Why</h2>
<ol start="3"><li>No fragmentation</li><li>Sharing of prefixes<ul><li>copy on write<li>reference counts</ul></li><li>Swapping</li></ol>
<blockquote><p>Memory is the bottleneck.</p></blockquote>
<pre>
for block in table:
    read(block)</pre>
<p>Line one<br>Line two<br/>Line three
<table><thead><tr><th>Model</th><th>Tokens/s</th></tr></thead>
<tbody><tr><td>SmolLM2 135M<td>124<tr><td>Qwen3 0.6B</td><td>41</td></tr></tbody></table>
<p>5 &lt; 6 &amp;&amp; caf&eacute; &#x263A;</p>
<hr>
<figure><img src="chart.png" alt="chart"><figcaption>Figure 1: throughput</figcaption></figure>
<form><input value="q"><button>Search</button><select><option>One</option></select><textarea>draft</textarea></form>
<noscript>Enable JavaScript</noscript><template><p>template</p></template>
<svg><title>icon title</title><text>icon</text><path d="M0 0"/></svg><iframe src="/ad"></iframe>
</article></main>
<footer><p>&copy; 2025 Someone</p></footer>
</body></html>`;

const TEXT = `Paged attention

The KV cache is split into blocks of 16 tokens; a block table maps positions to blocks. See the vLLM paper.

Why

 3. No fragmentation
 4. Sharing of prefixes
    * copy on write
    * reference counts
 5. Swapping

> Memory is the bottleneck.

for block in table:
    read(block)

Line one
Line two
Line three

Model | Tokens/s
SmolLM2 135M | 124
Qwen3 0.6B | 41

5 < 6 && café ☺

---

Figure 1: throughput

© 2025 Someone`;

/** 1 MB of <div> nested 95,000 deep: html-to-text took 6-12 s over it on the main thread, then overflowed the stack. */
const NESTED = `${"<div>".repeat(95_000)}x${"</div>".repeat(95_000)}`;
/** 1.6 MB of flat paragraphs: html-to-text took 0.8-2.2 s over it on the main thread. */
const FLAT = "<p>word</p>".repeat(145_000);

/**
 * Runs `work` while a 5 ms interval ticks on this thread, and gives the longest time between two ticks (or between the
 * last tick and the end): how long this thread's event loop was blocked at most.
 */
async function longestStall<T>(work: () => Promise<T>): Promise<{ outcome: T | unknown; longestMs: number }> {
  let last = performance.now();
  let longestMs = 0;
  const tick = () => {
    const now = performance.now();
    longestMs = Math.max(longestMs, now - last);
    last = now;
  };
  const timer = setInterval(tick, 5);
  let outcome: T | unknown;
  try {
    outcome = await work();
  } catch (error) {
    outcome = error;
  }
  await new Promise((resolve) => setTimeout(resolve, 20));
  tick();
  clearInterval(timer);
  return { outcome, longestMs };
}

describe("readable HTML", () => {
  const readers: HtmlTextReader[] = [];
  afterAll(async () => {
    await Promise.all(readers.map((reader) => reader.close()));
  });

  it("keeps a page's words, paragraphs, headings, lists, quotes, code and tables, and leaves the rest out", async () => {
    const page = await readableHtml(PAGE);
    expect(page).toEqual({ title: "Paged attention — notes", text: TEXT });
    // Left out: head, scripts, styles, navigation, link targets, images, forms' controls, SVG (its <title> too).
    for (const absent of ["tracking", "color", "Home", "arxiv", "chart.png", "Search", "One", "draft", "Enable", "template", "icon", "/ad"]) {
      expect(page.text).not.toContain(absent);
    }
  });

  it("reads what authors leave unclosed or out, as browsers do", async () => {
    // No </head> and no <body>; paragraphs and items closed by the next one; an end tag with nothing to close.
    expect(await readableHtml("<head><title>T</title><meta charset=utf-8><p>one<p>two</span><ul><li>a<li>b</ul>")).toEqual({ title: "T", text: "one\n\ntwo\n\n * a\n * b" });
    expect(await readableHtml("<p>no title</p><svg><title>icon</title></svg>")).toEqual({ title: undefined, text: "no title" });
    expect(await readableHtml("<script>unended")).toEqual({ title: undefined, text: "" });
  });

  it("reads hostile pages without blocking the main thread: text or the budget's error, never a stack overflow", async () => {
    const seen: Record<string, { outcome: string; longestStallMs: number }> = {};
    for (const [name, html, expected] of [["nested", NESTED, /^x$/], ["flat", FLAT, /^word\n\nword\n\n/]] as const) {
      const { outcome, longestMs } = await longestStall(async () => readableHtml(html));
      const text = (outcome as { text?: unknown }).text;
      seen[name] = {
        outcome: outcome instanceof HtmlTextError ? outcome.code : outcome instanceof Error ? `${outcome.name}: ${outcome.message}` : typeof text === "string" && expected.test(text) ? "text" : `unexpected text`,
        longestStallMs: Math.round(longestMs),
      };
    }
    for (const [name, { outcome, longestStallMs }] of Object.entries(seen)) {
      expect(outcome, `${name}: ${JSON.stringify(seen)}`).toMatch(/^(text|too_slow)$/);
      // A responsiveness bound, not a speed one: html-to-text held this thread for seconds here.
      expect(longestStallMs, `${name}: the longest stall of the main thread, ${JSON.stringify(seen)}`).toBeLessThan(250);
    }
  });

  it("gives up on a page past its budget, ending its thread, and reads the next page on a new one", async () => {
    const reader = new HtmlTextReader({ maxThreads: 1 });
    readers.push(reader);
    expect(await reader.read("<p>warm</p>")).toEqual({ title: undefined, text: "warm" });
    expect(reader.threadCount).toBe(1);
    const error = await reader.read("<p>word</p>".repeat(400_000), { budgetMs: 5 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(HtmlTextError);
    expect(error).toMatchObject({ code: "too_slow", message: "the HTML took longer than 5 ms to turn into text, so it was given up" });
    expect(reader.threadCount).toBe(0); // its exit was seen before the read failed
    expect(await reader.read("<h1>next</h1>")).toEqual({ title: undefined, text: "next" });
    expect(reader.threadCount).toBe(1);
  });

  it("stops a read when its signal aborts, and fails a page over the thread's memory as too_large", async () => {
    const reader = new HtmlTextReader({ maxThreads: 1 });
    readers.push(reader);
    const controller = new AbortController();
    const read = reader.read(FLAT.repeat(2), { signal: controller.signal });
    controller.abort(new Error("the run was cancelled"));
    await expect(read).rejects.toThrow("the run was cancelled");
    expect(reader.threadCount).toBe(0);
    const small = new HtmlTextReader({ maxThreads: 1, maxHeapMb: 8 });
    readers.push(small);
    const error = await small.read("<p>word</p>".repeat(400_000)).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: "HtmlTextError", code: "too_large" });
    expect(small.threadCount).toBe(0);
  });
});
