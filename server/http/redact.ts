// Credentials out of what loom writes to its log: every URL in a text keeps its scheme, host and port, and loses its
// user info, path, query and fragment, since hosted endpoints carry their API key in the path (Alchemy and Infura's
// /v2/KEY, QuickNode's /TOKEN/) as often as in user:password.

/** What stands for the user info, and for the path, query and fragment, of a redacted URL. */
export const REDACTED = "***";

/**
 * A scheme, `://`, then everything up to a character no URL written in a message has (white space, quotes, angle
 * brackets, backslash). What follows the host is cut whole, so a trailing `.` or `)` of the sentence is given back.
 */
const URL_IN_TEXT = /\b([a-z][a-z0-9+.-]*):\/\/([^\s"'`<>\\]+)/gi;
const TRAILING_PUNCTUATION = /[.,;:!?)\]}]+$/;

/**
 * `text` with each URL in it cut to `scheme://host:port`, user info replaced by `***@`, and anything after the host
 * (path, query, fragment) replaced by `/***`; a bare `/` after the host stays. URLs without a host (`file:///...` in
 * a stack trace) are left as they are: they carry no credentials.
 *
 * NOTE: user info runs to the last `@` before any `?` or `#`, so a password with an unencoded `/` or `@` is still cut
 * out whole; a path holding an `@` is then cut as if it were user info (more is hidden, never less).
 */
export function redactUrls(text: string): string {
  return text.replace(URL_IN_TEXT, (_match, scheme: string, rest: string) => {
    const trailing = TRAILING_PUNCTUATION.exec(rest)?.[0] ?? "";
    const url = trailing ? rest.slice(0, -trailing.length) : rest;
    if (url.startsWith("/")) return `${scheme}://${rest}`;
    const beforeQuery = url.split(/[?#]/, 1)[0]!;
    const at = beforeQuery.lastIndexOf("@");
    const userInfo = at >= 0;
    const afterUserInfo = url.slice(at + 1);
    const hostEnd = afterUserInfo.search(/[/?#]/);
    const host = hostEnd < 0 ? afterUserInfo : afterUserInfo.slice(0, hostEnd);
    const tail = hostEnd < 0 ? "" : afterUserInfo.slice(hostEnd);
    const shownTail = tail === "" || tail === "/" ? tail : `/${REDACTED}`;
    return `${scheme}://${userInfo ? `${REDACTED}@` : ""}${host}${shownTail}${trailing}`;
  });
}
