// For tests that provoke failures behind secret-bearing URLs (an RPC key in a path, a Redis or PostgreSQL password):
// what of a list of secrets a response shows, in its body or any header, headers also read as base64 (x402's
// PAYMENT-REQUIRED and PAYMENT-RESPONSE are base64 JSON, which a plain search would miss). Plain code, no test-runner
// imports.

/** A response read whole: what the checks and the test's own assertions need. */
export interface ReadResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The body as JSON, or undefined when it is not JSON. */
  body: any;
}

/** Reads `response` whole. */
export async function readResponse(response: Response): Promise<ReadResponse> {
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/**
 * Where each of `secrets` shows in `response`: `body: <secret>` or `header <name>: <secret>` (`(base64)` when found in
 * the header's decoded value); empty when none does. Case-sensitive: the secrets are the test's own strings.
 */
export function secretsShown(response: Pick<ReadResponse, "headers" | "text">, secrets: readonly string[]): string[] {
  const shown: string[] = [];
  for (const secret of secrets) {
    if (response.text.includes(secret)) shown.push(`body: ${secret}`);
    response.headers.forEach((value, name) => {
      if (value.includes(secret)) shown.push(`header ${name}: ${secret}`);
      else if (base64Text(value)?.includes(secret)) shown.push(`header ${name} (base64): ${secret}`);
    });
  }
  return shown;
}

/** A header value read as base64 (standard or URL-safe), when it is that; undefined otherwise. */
function base64Text(value: string): string | undefined {
  const trimmed = value.trim();
  if (trimmed.length < 8 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) return undefined;
  return Buffer.from(trimmed, "base64").toString("utf8");
}
