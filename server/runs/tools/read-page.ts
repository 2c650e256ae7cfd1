// The read_page tool: fetches a URL through safeRequest and gives the model its title and readable text (HTML
// converted, plain text and Markdown as they are), bounded in size.
import type { NetworkPolicy } from "./network-policy.js";
import { DEFAULT_HTML_TEXT_BUDGET_MS, HtmlTextError, readableHtml } from "./html-text.js";
import { safeRequest } from "./safe-http.js";
import type { RunTool, ToolContext } from "./tool.js";

/** How much read_page fetches and returns. */
export interface ReadPageLimits {
  /** The deadline of the fetch, redirects included. Default 15,000 ms. */
  timeoutMs: number;
  /** The most bytes of the page read; a longer page is cut there (and the text says so). Default 2 MiB. */
  maxBytes: number;
  /** The most characters of text returned. Default 20,000. */
  maxChars: number;
  /** Default 5. */
  maxRedirects: number;
  /**
   * How long turning a page's HTML into text may take, on a worker thread; past it the thread is terminated and the
   * model told so. Default 5,000 ms.
   */
  parseBudgetMs: number;
}

export const DEFAULT_READ_PAGE_LIMITS: ReadPageLimits = {
  timeoutMs: 15_000, maxBytes: 2 * 1024 * 1024, maxChars: 20_000, maxRedirects: 5, parseBudgetMs: DEFAULT_HTML_TEXT_BUDGET_MS,
};

/** Options of a ReadPageTool. */
export interface ReadPageOptions {
  /** What it may reach. Default: public addresses only. */
  policy?: NetworkPolicy;
  limits?: Partial<ReadPageLimits>;
}

const HTML_TYPES = new Set(["text/html", "application/xhtml+xml"]);
const TEXT_TYPES = new Set(["text/plain", "text/markdown", "text/x-markdown"]);
const MAX_URL_LENGTH = 2048;

/** read_page: `{url}` -> the page's title, final URL and text. */
export class ReadPageTool implements RunTool {
  readonly name = "read_page";
  readonly description = "Fetches a web page (http or https URL) and returns its title and readable text. Use it to read a search result or a URL from the task.";
  readonly parameters = {
    type: "object",
    properties: { url: { type: "string", minLength: 1, maxLength: MAX_URL_LENGTH, description: "The page's full URL, starting with http:// or https://" } },
    required: ["url"],
    additionalProperties: false,
  };
  private readonly policy: NetworkPolicy;
  private readonly limits: ReadPageLimits;

  constructor(options: ReadPageOptions = {}) {
    this.policy = options.policy ?? {};
    this.limits = { ...DEFAULT_READ_PAGE_LIMITS, ...options.limits };
  }

  async run(args: Record<string, unknown>, context: ToolContext): Promise<string> {
    const url = args.url;
    if (typeof url !== "string" || url.trim() === "" || url.length > MAX_URL_LENGTH) {
      throw new Error(`read_page needs "url": an http or https URL of at most ${MAX_URL_LENGTH} characters`);
    }
    const { timeoutMs, maxBytes, maxRedirects, maxChars, parseBudgetMs } = this.limits;
    const response = await safeRequest({
      url: url.trim(), timeoutMs, maxBytes, maxRedirects, overflow: "truncate", policy: this.policy, signal: context.signal,
      headers: { accept: "text/html, application/xhtml+xml, text/plain;q=0.9, text/markdown;q=0.9, */*;q=0.1" },
    });
    if (response.status < 200 || response.status > 299) throw new Error(`${response.url} answered HTTP ${response.status}`);
    const { mediaType, charset } = contentType(response.headers["content-type"]);
    const body = decode(response.body, charset);
    let title: string | undefined;
    let text: string;
    if (HTML_TYPES.has(mediaType) || (mediaType === "" && /<(html|body|p|div)[\s>]/i.test(body))) {
      try {
        ({ title, text } = await readableHtml(body, { budgetMs: parseBudgetMs, signal: context.signal }));
      } catch (error) {
        if (error instanceof HtmlTextError) throw new Error(`read_page gave up on ${response.url}: ${error.message}`);
        throw error;
      }
    } else if (TEXT_TYPES.has(mediaType) || mediaType === "") {
      text = body.trim();
    } else {
      throw new Error(`read_page reads HTML, plain text and Markdown; ${response.url} is ${mediaType}`);
    }
    return pageText({ title, url: response.url, text, maxChars, bytesCut: response.truncated ? maxBytes : undefined });
  }
}

/** The page as the model sees it: title, final URL, then the text, with a note where it was cut. */
function pageText(page: { title: string | undefined; url: string; text: string; maxChars: number; bytesCut: number | undefined }): string {
  const lines = [`Title: ${page.title ?? "(none)"}`, `URL: ${page.url}`];
  if (page.bytesCut !== undefined) lines.push(`Note: the page is longer than ${page.bytesCut} bytes; only its beginning was read.`);
  let text = page.text === "" ? "(the page has no text)" : page.text;
  if (text.length > page.maxChars) {
    lines.push(`Note: the text is cut at ${page.maxChars} of its ${text.length} characters.`);
    text = text.slice(0, page.maxChars);
  }
  return `${lines.join("\n")}\n\n${text}`;
}

/** A Content-Type header's media type (lower case, "" when absent) and charset. */
function contentType(header: string | undefined): { mediaType: string; charset: string | undefined } {
  const [type = "", ...parameters] = (header ?? "").split(";");
  const charset = parameters.map((parameter) => /^\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(parameter)?.[1]).find((value) => value !== undefined);
  return { mediaType: type.trim().toLowerCase(), charset };
}

/** The body as text in its declared charset (UTF-8 when none, or one TextDecoder does not know). */
function decode(body: Buffer, charset: string | undefined): string {
  try {
    return new TextDecoder(charset ?? "utf-8").decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body);
  }
}
