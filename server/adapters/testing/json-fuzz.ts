// Random and mutated JSON bodies for the request parsers' fuzz tests: values drawn from a format's own keys, strings
// and numbers (so mutations hit the fields the parser reads), and in-place mutations of a valid body (replace,
// delete, wrap, nest 2,000 levels deep, stringify). Plain code, no test-runner imports.

/** The vocabulary a fuzzer draws from. */
export interface FuzzVocabulary {
  keys: readonly string[];
  strings: readonly string[];
  numbers: readonly number[];
}

/** One element of `items`. */
export function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

/** Random JSON values and mutations drawn from `vocabulary`. */
export function jsonFuzzer(vocabulary: FuzzVocabulary) {
  const { keys, strings, numbers } = vocabulary;

  /** A random JSON value, nested at most `depth` levels. */
  function randomJson(random: () => number, depth: number): unknown {
    const roll = random();
    if (depth <= 0 || roll < 0.5) {
      const kind = Math.floor(random() * 5);
      if (kind === 0) return null;
      if (kind === 1) return random() < 0.5;
      if (kind === 2) return random() < 0.5 ? pick(random, numbers) : (random() - 0.5) * 10 ** Math.floor(random() * 40);
      return pick(random, strings);
    }
    if (roll < 0.75) return Array.from({ length: Math.floor(random() * 5) }, () => randomJson(random, depth - 1));
    const object: Record<string, unknown> = {};
    for (let index = Math.floor(random() * 6); index > 0; index--) object[pick(random, keys)] = randomJson(random, depth - 1);
    return object;
  }

  /** Applies one random mutation to `body` in place: replace, delete, wrap, nest deeply, or stringify a value. */
  function mutate(random: () => number, body: Record<string, unknown>): void {
    const [container, key] = pick(random, sites(body));
    const current = (container as Record<string | number, unknown>)[key];
    const roll = random();
    const set = (value: unknown) => ((container as Record<string | number, unknown>)[key] = value);
    if (roll < 0.4) set(randomJson(random, 3));
    else if (roll < 0.55) {
      if (Array.isArray(container)) container.splice(key as number, 1);
      else delete container[key as string];
    } else if (roll < 0.65) set([current]);
    else if (roll < 0.7) set(deeplyNested(2000, current));
    else if (roll < 0.8) set(JSON.stringify(current) ?? "undefined");
    else if (roll < 0.9) set(pick(random, numbers));
    else set(pick(random, strings));
  }

  return { randomJson, mutate };
}

/** Arrays and objects nested `levels` deep around a value. */
function deeplyNested(levels: number, inner: unknown): unknown {
  let value = inner;
  for (let level = 0; level < levels; level++) value = level % 2 === 0 ? [value] : { content: value };
  return value;
}

/** Every (container, key) pair inside a value down to a depth (a deep nest from an earlier mutation stays whole). */
function sites(value: unknown, depth = 12, out: Array<[Record<string, unknown> | unknown[], string | number]> = []) {
  if (depth === 0) return out;
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      out.push([value, index]);
      sites(item, depth - 1, out);
    });
  } else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      out.push([value as Record<string, unknown>, key]);
      sites(item, depth - 1, out);
    }
  }
  return out;
}
