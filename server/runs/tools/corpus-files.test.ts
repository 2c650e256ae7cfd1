// Files into corpus documents: which files a folder walk takes, titles by type, and the skips with their reasons.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentFromText, listCorpusFiles, readCorpusFile } from "./corpus-files.js";

describe("corpus files", () => {
  let folder: string;
  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), "loom-corpus-files-"));
    mkdirSync(join(folder, "b", "c"), { recursive: true });
    mkdirSync(join(folder, ".git"));
    writeFileSync(join(folder, "a.txt"), "plain");
    writeFileSync(join(folder, "b", "page.HTM"), "<title>P</title><p>x</p>");
    writeFileSync(join(folder, "b", "c", "deep.md"), "deep");
    writeFileSync(join(folder, "b", "image.png"), "png");
    writeFileSync(join(folder, ".git", "config.txt"), "hidden");
    symlinkSync(folder, join(folder, "b", "c", "loop")); // a link back up the tree is walked once
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it("walks folders recursively in name order, passing over other types, hidden names and loops", async () => {
    const listed = await listCorpusFiles([folder, join(folder, "a.txt"), join(folder, "b", "image.png"), join(folder, "none.md")]);
    expect(listed.files).toEqual([join(folder, "a.txt"), join(folder, "b", "c", "deep.md"), join(folder, "b", "page.HTM")]);
    expect(listed.skipped).toEqual([
      { path: join(folder, "b", "image.png"), reason: "not a file type the corpus reads (.txt, .md, .markdown, .html, .htm)" },
      { path: join(folder, "none.md"), reason: "no such file or folder" },
    ]);
  });

  it("titles Markdown by its first heading, HTML by <title>, text by its file name", async () => {
    expect(await documentFromText("/d/notes.md", "Intro line\n\n## Second-level first # \n\n# Later")).toMatchObject({ title: "Second-level first", url: "file:///d/notes.md" });
    expect((await documentFromText("/d/notes.md", "Setext title\n===\n\nbody")).title).toBe("Setext title");
    expect((await documentFromText("/d/plain.md", "no heading")).title).toBe("plain");
    expect(await documentFromText("/d/a page.html", "<html><head><title> Spaced\n title </title></head><body><h1>H</h1><p>text</p></body></html>"))
      .toEqual({ url: "file:///d/a%20page.html", title: "Spaced title", body: "H\n\ntext" });
    expect((await documentFromText("/d/untitled.htm", "<p>only text</p>")).title).toBe("untitled");
    expect(await documentFromText("/d/readme.txt", "\uFEFF  text  \n", "https://example.org/readme")).toEqual({ url: "https://example.org/readme", title: "readme", body: "text" });
  });

  it("skips files too large, binary, empty or too long, saying why", async () => {
    const write = (name: string, content: string | Buffer) => {
      writeFileSync(join(folder, name), content);
      return join(folder, name);
    };
    expect(await readCorpusFile(write("big.txt", "x".repeat(2000)), { maxFileBytes: 1000 })).toEqual({ path: join(folder, "big.txt"), reason: "2000 bytes is more than the 1000 read per file" });
    expect(await readCorpusFile(write("binary.txt", Buffer.from([65, 0, 66])))).toMatchObject({ reason: "it holds NUL bytes: not a text file" });
    expect(await readCorpusFile(write("empty.html", "<script>x()</script>"))).toMatchObject({ reason: "it has no text" });
    expect(await readCorpusFile(write("long.txt", "y".repeat(500_001)))).toMatchObject({ reason: "its text is 500001 characters; a corpus document holds at most 500000" });
    expect(await readCorpusFile(join(folder, "a.txt"))).toEqual({ url: pathToFileURL(join(folder, "a.txt")).href, title: "a", body: "plain" });
  });
});
