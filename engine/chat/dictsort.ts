// The order Jinja's `dictsort` filter gives a mapping's keys, as @huggingface/jinja (which renders loom's chat
// templates) computes it: by default case-insensitive (both keys lowercased, then compared by UTF-16 code units), and
// stable, so keys equal but for case keep the mapping's own order (Object.keys order). Jinja2 lowercases too.

/** `keys` in the order `{% for key, value in mapping | dictsort %}` visits them. */
export function dictsortKeys(keys: readonly string[]): string[] {
  return keys
    .map((key) => ({ key, folded: key.toLowerCase() }))
    .sort((a, b) => (a.folded < b.folded ? -1 : a.folded > b.folded ? 1 : 0))
    .map(({ key }) => key);
}
