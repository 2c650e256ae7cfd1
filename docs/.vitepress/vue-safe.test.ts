import { afterAll, describe, expect, it } from "vitest";
import { createMarkdownRenderer, disposeMdItInstance } from "vitepress";
import { escapeUnknownTags, relativeSrc, vueSafe } from "./vue-safe";

describe("vueSafe", () => {
  afterAll(() => disposeMdItInstance());

  it("escapes tags that are no HTML element, keeps the others and comments", () => {
    expect(escapeUnknownTags("a <model> and <file-name>, <b>bold</b><br><!-- note --></details>")).toBe(
      "a &lt;model&gt; and &lt;file-name&gt;, <b>bold</b><br><!-- note --></details>",
    );
  });

  it("writes a relative src as ./src, the form Vite resolves as a file", () => {
    expect(relativeSrc('<img src="server/x.png"> <img alt="" src="../y.png"> <img src="https://e.org/z.png">')).toBe(
      '<img src="./server/x.png"> <img alt="" src="../y.png"> <img src="https://e.org/z.png">',
    );
  });

  it("renders a page under v-pre with its placeholders as text", async () => {
    disposeMdItInstance();
    const md = await createMarkdownRenderer("/tmp", { highlight: (code) => code, config: (md) => md.use(vueSafe) });
    const html = md.render("# T\n\nUse `{{ bos_token }}` with a <model> and <kbd>q</kbd>.\n", {});
    expect(html.startsWith("<div v-pre>\n")).toBe(true);
    expect(html.trimEnd().endsWith("</div>")).toBe(true);
    expect(html).toContain("with a &lt;model&gt; and <kbd>q</kbd>.");
  });
});
