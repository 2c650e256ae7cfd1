// Documents for the search corpus from files: .txt and .md as they are (a Markdown title is its first heading), .html
// and .htm as readable text (title from <title>). Folders are walked recursively. Each document's URL is `file://`
// and its absolute path unless one is given.
import { readFile, readdir, realpath, stat } from "node:fs/promises";
import { basename, extname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type CorpusDocument, MAX_CORPUS_BODY_LENGTH } from "../../platform/store/corpus-store.js";
import { readableHtml } from "./html-text.js";

/** The file name extensions read, lower case. */
export const CORPUS_FILE_EXTENSIONS = [".txt", ".md", ".markdown", ".html", ".htm"] as const;

/** Files larger than this are skipped unless told otherwise: 4 MiB. */
export const DEFAULT_MAX_CORPUS_FILE_BYTES = 4 * 1024 * 1024;

/** A file that was not made into a document, and why. */
export interface SkippedFile {
  path: string;
  reason: string;
}

/**
 * The files under `paths` (files as named, folders walked recursively in name order), as absolute paths. A named file
 * of another type, or a path that does not exist, is skipped with a reason; inside folders, other types and names
 * starting with "." (.git) are passed over silently.
 */
export async function listCorpusFiles(paths: readonly string[]): Promise<{ files: string[]; skipped: SkippedFile[] }> {
  const files: string[] = [];
  const skipped: SkippedFile[] = [];
  const seenFolders = new Set<string>();
  const walk = async (folder: string): Promise<void> => {
    const real = await realpath(folder);
    if (seenFolders.has(real)) return; // a link back up the tree
    seenFolders.add(real);
    const entries = (await readdir(folder, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith(".")) continue;
      const path = join(folder, entry.name);
      const info = await stat(path).catch(() => undefined); // follows links; a dangling one is passed over
      if (info?.isDirectory()) await walk(path);
      else if (info?.isFile() && isCorpusFile(path)) files.push(path);
    }
  };
  for (const given of paths) {
    const path = resolve(given);
    const info = await stat(path).catch((error: NodeJS.ErrnoException) => error);
    if (info instanceof Error) {
      skipped.push({ path, reason: info.code === "ENOENT" ? "no such file or folder" : info.message });
    } else if (info.isDirectory()) {
      await walk(path);
    } else if (!isCorpusFile(path)) {
      skipped.push({ path, reason: `not a file type the corpus reads (${CORPUS_FILE_EXTENSIONS.join(", ")})` });
    } else {
      files.push(path);
    }
  }
  return { files: [...new Set(files)], skipped };
}

/**
 * Reads one file as a corpus document, or says why not (too large, binary, no text, text too long).
 * @param url the document's URL; default `file://` and the absolute path.
 */
export async function readCorpusFile(path: string, options: { maxFileBytes?: number; url?: string } = {}): Promise<CorpusDocument | SkippedFile> {
  const absolute = resolve(path);
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_CORPUS_FILE_BYTES;
  try {
    const { size } = await stat(absolute);
    if (size > maxFileBytes) return { path: absolute, reason: `${size} bytes is more than the ${maxFileBytes} read per file` };
    const bytes = await readFile(absolute);
    if (bytes.includes(0)) return { path: absolute, reason: "it holds NUL bytes: not a text file" };
    const document = await documentFromText(absolute, new TextDecoder("utf-8").decode(bytes), options.url);
    if (document.body.trim() === "") return { path: absolute, reason: "it has no text" };
    if (document.body.length > MAX_CORPUS_BODY_LENGTH) {
      return { path: absolute, reason: `its text is ${document.body.length} characters; a corpus document holds at most ${MAX_CORPUS_BODY_LENGTH}` };
    }
    return document;
  } catch (error) {
    return { path: absolute, reason: (error as Error).message };
  }
}

/**
 * A document from a file's text, by its extension (see CORPUS_FILE_EXTENSIONS). HTML is read on a worker thread.
 * @throws HtmlTextError when HTML takes longer than its budget (5,000 ms) or its thread's memory to turn into text.
 */
export async function documentFromText(path: string, text: string, url?: string): Promise<CorpusDocument> {
  const extension = extname(path).toLowerCase();
  const name = basename(path, extname(path));
  const documentUrl = url ?? pathToFileURL(resolve(path)).href;
  if (extension === ".html" || extension === ".htm") {
    const { title, text: body } = await readableHtml(text);
    return { url: documentUrl, title: clip(title ?? name), body };
  }
  const body = text.replace(/^\uFEFF/, "").trim();
  const title = extension === ".md" || extension === ".markdown" ? markdownTitle(body) : undefined;
  return { url: documentUrl, title: clip(title ?? name), body };
}

function isCorpusFile(path: string): boolean {
  return (CORPUS_FILE_EXTENSIONS as readonly string[]).includes(extname(path).toLowerCase());
}

/** The first heading of a Markdown text: `# Title`, or a line underlined with === or ---. */
function markdownTitle(markdown: string): string | undefined {
  const match = /^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$|^ {0,3}(\S.*)\n {0,3}(?:=+|-+)[ \t]*$/m.exec(markdown);
  const title = (match?.[1] ?? match?.[2])?.trim();
  return title === "" ? undefined : title;
}

/** A title within the store's limit (1000 characters). */
function clip(title: string): string {
  const oneLine = title.replace(/\s+/g, " ").trim();
  return oneLine.length > 1000 ? `${oneLine.slice(0, 997)}...` : oneLine;
}
