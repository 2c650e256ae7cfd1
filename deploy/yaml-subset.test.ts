import { describe, expect, it } from "vitest";
import { YamlSubsetError, parseDocuments } from "./yaml-subset.js";

describe("the YAML subset reader", () => {
  it("reads every construct the manifests use, as a YAML parser does", () => {
    const text = [
      "# a comment",
      "apiVersion: v1 # trailing comment",
      "kind: 'Pod'",
      "metadata:",
      "  labels:",
      "    app.kubernetes.io/name: loom",
      "    \"quoted key\": \"a \\\"b\\\" \\u00e9\"",
      "spec:",
      "  replicas: 2",
      "  ratio: 0.5",
      "  negative: -3",
      "  enabled: true",
      "  disabled: false",
      "  nothing: null",
      "  empty: {}",
      "  none: []",
      "  containers:",
      "    - name: c",
      "      args: [\"gateway\", --host, '0.0.0.0', 8080]",
      "      url: http://$(POD_IP):8081",
      "      memory: 512Mi",
      "      quote: 'it''s'",
      "      ports:",
      "      - containerPort: 8080",
      "        name: http",
      "    -",
      "      name: d",
      "    - plain item",
      "---",
      "",
      "--- # another",
      "- - nested",
      "  - list",
      "- last",
    ].join("\n");
    expect(parseDocuments(text)).toEqual([
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { labels: { "app.kubernetes.io/name": "loom", "quoted key": 'a "b" é' } },
        spec: {
          replicas: 2, ratio: 0.5, negative: -3, enabled: true, disabled: false, nothing: null, empty: {}, none: [],
          containers: [
            { name: "c", args: ["gateway", "--host", "0.0.0.0", 8080], url: "http://$(POD_IP):8081", memory: "512Mi", quote: "it's", ports: [{ containerPort: 8080, name: "http" }] },
            { name: "d" },
            "plain item",
          ],
        },
      },
      [["nested", "list"], "last"],
    ]);
  });

  it("keeps __proto__ an ordinary key", () => {
    const [value] = parseDocuments("__proto__: x\n");
    expect(Object.keys(value as object)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });

  it.each([
    ["yes", "a: yes\n"],
    ["octal-looking number", "mode: 0644\n"],
    ["exponent", "n: 1e3\n"],
    ["underscores", "n: 1_000\n"],
    ["base 60", "t: 12:30\n"],
    ["date", "d: 2024-01-02\n"],
    ["True", "a: True\n"],
    ["an ambiguous item in [...]", "a: [on]\n"],
    ["a non-string key", "80: http\n"],
  ])("refuses a plain scalar YAML 1.1 and 1.2 read differently: %s", (_, text) => {
    expect(() => parseDocuments(text, "f.yaml")).toThrow(/f\.yaml:1: .*(reads differently|not a string)/);
  });

  it.each([
    ["an anchor", "a: &x 1\n", /anchor/],
    ["a block scalar", "a: |\n  text\n", /block scalar/],
    ["a tag", "a: !!str 1\n", /tag/],
    ["a flow mapping", "a: {b: 1}\n", /flow mappings/],
    ["a nested flow sequence", "a: [[1]]\n", /in \[\.\.\.\]/],
    ["an unclosed flow sequence", "a: [1,\n  2]\n", /close on the same line/],
    ["a trailing comma", "a: [1, ]\n", /trailing/],
    ["a multi-line plain scalar", "a: one\n  two\n", /2: unexpected indentation/],
    ["a multi-line quoted string", "a: \"one\n  two\"\n", /unterminated/],
    ["a YAML-only escape", "a: \"\\x41\"\n", /JSON escapes/],
    ["an empty value", "a:\nb: 1\n", /1: empty value/],
    ["a duplicate key", "a: 1\na: 2\n", /2: duplicate key 'a'/],
    ["a tab", "a:\n\tb: 1\n", /tab/],
    ["a value with ': '", "a: b: c\n", /may not contain/],
    ["text after a quoted string", "a: \"b\" c\n", /unexpected 'c'/],
    ["an item where a key belongs", "a: 1\n- b\n", /sequence item where a key/],
    ["a line that is no key", "a: 1\njust text\n", /expected 'key: value'/],
    ["a dedent below the document", "  a: 1\nb: 2\n", /2: unexpected indentation/],
    ["a document end marker", "a: 1\n...\n", /document end/],
  ])("refuses %s", (_, text, message) => {
    expect(() => parseDocuments(text)).toThrow(YamlSubsetError);
    expect(() => parseDocuments(text)).toThrow(message);
  });
});
