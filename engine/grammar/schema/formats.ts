// String formats as full-match regular expressions, written to generate only strings that ajv-formats' "full" mode
// accepts: real calendar dates (no February 29, since leap years need arithmetic), times with a zone, RFC 4122-shaped
// UUIDs, and a conservative subset of email addresses.

const DATE = "\\d{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1\\d|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)";
const TIME = "(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d{1,6})?(?:Z|[+-](?:[01]\\d|2[0-3]):[0-5]\\d)";
const LABEL = "[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?";

/** Regex (anchored, whole string) per supported `format`. */
export const FORMAT_PATTERNS: Readonly<Record<string, string>> = {
  "date-time": `${DATE}T${TIME}`,
  date: DATE,
  time: TIME,
  uuid: "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
  email: `[a-zA-Z0-9_+-]{1,32}(?:\\.[a-zA-Z0-9_+-]{1,32}){0,3}@(?:${LABEL}\\.){1,3}[a-zA-Z]{2,24}`,
};
