// A check that a chart's SVG text is well-formed XML as far as the charts need it, without an XML parser (none is a
// dependency): for the charts' tests.

/**
 * Checks `xml`: every tag closed, in order; every attribute double-quoted with no `<` in its value; no raw `<` or
 * `>` in text; no `&` outside the five predefined entities; nothing after the root element.
 * @returns the element names in document order.
 * @throws Error naming the first fault.
 */
export function checkWellFormed(xml: string): string[] {
  const names: string[] = [];
  const open: string[] = [];
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g;
  const strayAmpersand = (text: string) => text.replace(/&(amp|lt|gt|quot|apos);/g, "").includes("&");
  let at = 0;
  for (let match = tag.exec(xml); match !== null; match = tag.exec(xml)) {
    const [whole, closing, name, attributes, selfClosing] = match;
    const between = xml.slice(at, match.index);
    if (/[<>]/.test(between)) throw new Error(`raw < or > (or a malformed tag) before ${whole}: ${between.slice(0, 80)}`);
    if (strayAmpersand(between)) throw new Error(`unescaped & in the text before ${whole}`);
    if (strayAmpersand(attributes)) throw new Error(`unescaped & in the attributes of ${whole}`);
    if (closing) {
      const expected = open.pop();
      if (expected !== name) throw new Error(`</${name}> closes <${expected ?? "nothing"}>`);
    } else {
      if (at > 0 && open.length === 0) throw new Error(`a second root element <${name}>`);
      names.push(name);
      if (!selfClosing) open.push(name);
    }
    at = tag.lastIndex;
  }
  if (xml.slice(at).trim() !== "") throw new Error(`text after the last tag: ${xml.slice(at, at + 80)}`);
  if (open.length > 0) throw new Error(`unclosed <${open.join(">, <")}>`);
  return names;
}

/** XML text with the five predefined entities turned back into their characters. */
export function unescapeXml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|apos);/g, (_, name: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" })[name]!);
}
