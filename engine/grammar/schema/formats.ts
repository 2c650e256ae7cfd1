// The string and number formats enforced, and how every other format name is treated. Each string format is a
// regular expression whose every match ajv-formats (full mode, the validator the tests use) accepts: the older five
// are subsets written here (real calendar dates only, no February 29, since leap years need arithmetic; times with a
// zone, and date-times in UTC, `Z`, which zod's z.iso.datetime() also demands; lower-case UUIDs with an RFC 9562
// version (1-8) and variant (8-b) digit, as zod's z.uuid() demands; a conservative email), the newer ones are
// ajv-formats' own regexes, with the i
// flag where it has one, except hostname, which leaves out the trailing dot so that its 253-character limit is a
// plain maximum length instead of a lookahead (whose product with the labels would pass the DFA limits).

const DATE = "\\d{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1\\d|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)";
const CLOCK = "(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d{1,6})?";
const TIME = `${CLOCK}(?:Z|[+-](?:[01]\\d|2[0-3]):[0-5]\\d)`;
const LABEL = "[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?";

/** A string format: a regex the whole string must match (anchors optional), read with the i flag or not. */
export interface StringFormat {
  readonly source: string;
  readonly ignoreCase?: boolean;
  /** A length limit the format implies (in code points), applied as maxLength. */
  readonly maxLength?: number;
}

/** The string formats enforced. */
export const STRING_FORMATS: Readonly<Record<string, StringFormat>> = {
  "date-time": { source: `${DATE}T${CLOCK}Z` },
  date: { source: DATE },
  time: { source: TIME },
  uuid: { source: "[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}" },
  email: { source: `[a-zA-Z0-9_+-]{1,32}(?:\\.[a-zA-Z0-9_+-]{1,32}){0,3}@(?:${LABEL}\\.){1,3}[a-zA-Z]{2,24}` },
  // ajv-formats: uri() also asks for a "/" or ":", which the scheme always supplies.
  uri: { source: String.raw`^(?:[a-z][a-z0-9+\-.]*:)(?:\/?\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)|[Vv][0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)\]|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)|(?:[a-z0-9\-._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)(?:\?(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?$`, ignoreCase: true },
  hostname: { source: String.raw`^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[-0-9a-z]{0,61}[0-9a-z])?)*$`, ignoreCase: true, maxLength: 253 },
  ipv4: { source: String.raw`^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$` },
  ipv6: { source: String.raw`^((([0-9a-f]{1,4}:){7}([0-9a-f]{1,4}|:))|(([0-9a-f]{1,4}:){6}(:[0-9a-f]{1,4}|((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})|:))|(([0-9a-f]{1,4}:){5}(((:[0-9a-f]{1,4}){1,2})|:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})|:))|(([0-9a-f]{1,4}:){4}(((:[0-9a-f]{1,4}){1,3})|((:[0-9a-f]{1,4})?:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){3}(((:[0-9a-f]{1,4}){1,4})|((:[0-9a-f]{1,4}){0,2}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){2}(((:[0-9a-f]{1,4}){1,5})|((:[0-9a-f]{1,4}){0,3}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){1}(((:[0-9a-f]{1,4}){1,6})|((:[0-9a-f]{1,4}){0,4}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(:(((:[0-9a-f]{1,4}){1,7})|((:[0-9a-f]{1,4}){0,5}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:)))$`, ignoreCase: true },
  duration: { source: String.raw`^P(?!$)((\d+Y)?(\d+M)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?|(\d+W)?)$` },
};

/** Number formats (ajv-formats' own meaning): int32 and int64 are integers, int32 within 32 bits; float and double are any number. */
export const NUMBER_FORMATS: Readonly<Record<string, { readonly integer: boolean; readonly minimum?: number; readonly maximum?: number }>> = {
  int32: { integer: true, minimum: -(2 ** 31), maximum: 2 ** 31 - 1 },
  int64: { integer: true },
  float: { integer: false },
  double: { integer: false },
};

/**
 * String formats with a meaning that validators check (JSON Schema 2020-12 and ajv-formats) but that are not enforced
 * here: refused, since ignoring them would let through strings a validator rejects.
 */
const UNENFORCED_FORMATS: ReadonlySet<string> = new Set([
  "idn-email", "idn-hostname", "iri", "iri-reference", "uri-reference", "uri-template", "json-pointer",
  "relative-json-pointer", "json-pointer-uri-fragment", "regex", "iso-time", "iso-date-time", "url", "byte",
]);

/** What a format name means for generation: a string format, a number format, refused, or an annotation (ignored). */
export type FormatKind =
  | { readonly kind: "string"; readonly format: StringFormat }
  | { readonly kind: "number"; readonly integer: boolean; readonly minimum?: number; readonly maximum?: number }
  | { readonly kind: "refused" }
  | { readonly kind: "annotation" };

/**
 * How `name` is treated. Names nobody defines (zod's cuid, nanoid, base64; vendor formats) are annotations, as
 * JSON Schema 2020-12 makes every format by default. Looked up as own properties only: "constructor" or "__proto__"
 * are format names like any other.
 */
export function formatKind(name: string): FormatKind {
  if (Object.hasOwn(STRING_FORMATS, name)) return { kind: "string", format: STRING_FORMATS[name]! };
  if (Object.hasOwn(NUMBER_FORMATS, name)) return { kind: "number", ...NUMBER_FORMATS[name]! };
  return UNENFORCED_FORMATS.has(name) ? { kind: "refused" } : { kind: "annotation" };
}

/** The enforced format names, for messages. */
export const ENFORCED_FORMATS: readonly string[] = [...Object.keys(STRING_FORMATS), ...Object.keys(NUMBER_FORMATS)];
