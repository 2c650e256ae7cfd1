// HTML as text a model reads: the page's words, link text without the URLs, no scripts, styles, navigation or
// images; and the page's <title>. Shared by read_page and the corpus's file ingestion.
import { convert, type HtmlToTextOptions } from "html-to-text";

/** A page's title (undefined when it has none) and readable text. */
export interface ReadableHtml {
  title: string | undefined;
  text: string;
}

const SKIPPED = ["head", "title", "script", "style", "noscript", "template", "nav", "img", "picture", "svg", "iframe", "object", "embed", "button", "select"];

const TEXT_OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  selectors: [
    ...SKIPPED.map((selector) => ({ selector, format: "skip" })),
    // The link's words carry the meaning; its URL would cost tokens on every link.
    { selector: "a", options: { ignoreHref: true } },
    ...["h1", "h2", "h3", "h4", "h5", "h6"].map((selector) => ({ selector, options: { uppercase: false } })),
    // Columns apart, rather than every cell of a row run together.
    { selector: "table", format: "dataTable", options: { uppercaseHeaderCells: false, maxColumnWidth: 200 } },
  ],
};

const TITLE_OPTIONS: HtmlToTextOptions = { wordwrap: false, baseElements: { selectors: ["title"], returnDomByDefault: false } };

/** The title and readable text of an HTML document (or fragment). */
export function readableHtml(html: string): ReadableHtml {
  const title = convert(html, TITLE_OPTIONS).replace(/\s+/g, " ").trim();
  const text = convert(html, TEXT_OPTIONS).replace(/\n{3,}/g, "\n\n").trim();
  return { title: title === "" ? undefined : title, text };
}
