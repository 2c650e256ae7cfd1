// The query parameters of the dashboard's GET endpoints, each checked: unknown or repeated parameters are refused, and
// every value is bounded, so that a 400 names the parameter rather than a query doing something unexpected.
import { ProtocolError } from "../protocol/internal.js";
import { MAX_PAGE_LIMIT } from "../platform/store/page.js";

/** Rows per page when `limit` is absent. */
export const DEFAULT_PAGE_LIMIT = 50;

/** A request's query string, checked: only `allowed` parameters, each at most once. */
export class QueryParams {
  private readonly params: URLSearchParams;

  /** @throws ProtocolError (400) naming an unknown or repeated parameter. */
  constructor(query: string, allowed: readonly string[]) {
    this.params = new URLSearchParams(query);
    const seen = new Set<string>();
    for (const name of this.params.keys()) {
      const shown = name.slice(0, 40);
      if (!allowed.includes(name)) {
        throw new ProtocolError("invalid_request", `the query parameter ${JSON.stringify(shown)} is not taken here${allowed.length > 0 ? `: only ${allowed.join(", ")}` : ""}`, shown);
      }
      if (seen.has(name)) throw new ProtocolError("invalid_request", `the query parameter ${name} is given more than once`, name);
      seen.add(name);
    }
  }

  /** The parameter's value, or undefined when absent. */
  get(name: string): string | undefined {
    return this.params.get(name) ?? undefined;
  }

  /** `cursor` as `decode` reads it (which throws a 400 naming it when malformed), or undefined when absent. */
  cursor<K>(decode: (cursor: string) => K): K | undefined {
    const raw = this.get("cursor");
    return raw === undefined ? undefined : decode(raw);
  }

  /** `limit`: 1 to 100, default 50. */
  limit(): number {
    return this.integer("limit", 1, MAX_PAGE_LIMIT, DEFAULT_PAGE_LIMIT);
  }

  /** An integer parameter in [min, max], `fallback` when absent. */
  integer(name: string, min: number, max: number, fallback: number): number {
    const raw = this.get(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^\d{1,9}$/.test(raw) || value < min || value > max) {
      throw new ProtocolError("invalid_request", `${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw.slice(0, 40))}`, name);
    }
    return value;
  }

  /** A text parameter of 1 to `maxChars` characters, without NUL (a database refuses it), or undefined when absent. */
  text(name: string, maxChars: number): string | undefined {
    const raw = this.get(name);
    if (raw === undefined) return undefined;
    const length = [...raw].length;
    if (length === 0 || length > maxChars) throw new ProtocolError("invalid_request", `${name} must be 1 to ${maxChars} characters, got ${length}`, name);
    if (raw.includes("\0")) throw new ProtocolError("invalid_request", `${name} must not contain NUL characters`, name);
    return raw;
  }

  /** One of `choices`, or undefined when absent. */
  choice<T extends string>(name: string, choices: readonly T[]): T | undefined {
    const raw = this.get(name);
    if (raw === undefined) return undefined;
    if (!(choices as readonly string[]).includes(raw)) {
      throw new ProtocolError("invalid_request", `${name} must be one of ${choices.join(", ")}, got ${JSON.stringify(raw.slice(0, 40))}`, name);
    }
    return raw as T;
  }
}
