// DSSE envelopes (github.com/secure-systems-lab/dsse, as in-toto and Sigstore use them): the signature covers the
// pre-authentication encoding of the payload type and the payload, never the JSON around them, so a re-serialized
// envelope still verifies and a payload cannot be reinterpreted under another type.
import { type KeyObject, sign, verify } from "node:crypto";

/** The payload type of a loom release manifest. */
export const RELEASE_PAYLOAD_TYPE = "application/vnd.loom.release+json";
/** The payload type of a loom model manifest (model-manifest.ts). */
export const MODEL_PAYLOAD_TYPE = "application/vnd.loom.model+json";

/** A DSSE envelope as written to manifest.dsse.json. */
export interface DsseEnvelope {
  payloadType: string;
  /** The payload, base64. */
  payload: string;
  signatures: { keyid: string; sig: string }[];
}

/** A signature check's failure: names the file and, where there is one, the key. */
export class DsseError extends Error {
  override readonly name = "DsseError";
}

/** PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in bytes as ASCII decimals. */
export function preAuthEncoding(payloadType: string, payload: Uint8Array): Buffer {
  // Stryker disable next-line StringLiteral: Buffer.from reads a string as UTF-8 when the encoding is "" too
  const type = Buffer.from(payloadType, "utf8");
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${payload.length} `), payload]);
}

/** Signs `payload` with an Ed25519 private key into an envelope with one signature under `keyid`. */
export function signEnvelope(payload: Uint8Array, payloadType: string, privateKey: KeyObject, keyid: string): DsseEnvelope {
  const sig = sign(null, preAuthEncoding(payloadType, payload), privateKey);
  return { payloadType, payload: Buffer.from(payload).toString("base64"), signatures: [{ keyid, sig: sig.toString("base64") }] };
}

/** Checks an envelope's shape; `where` (a file or URL) names it in the error. @throws DsseError */
export function parseEnvelope(value: unknown, where: string): DsseEnvelope {
  const fail = (message: string): never => {
    throw new DsseError(`${where}: not a DSSE envelope: ${message}`);
  };
  if (typeof value !== "object" || value === null || Array.isArray(value)) return fail("must be a JSON object");
  const { payloadType, payload, signatures } = value as Record<string, unknown>;
  if (typeof payloadType !== "string" || payloadType === "") fail("payloadType must be a non-empty string");
  if (typeof payload !== "string" || !isBase64(payload)) fail("payload must be a base64 string");
  if (!Array.isArray(signatures) || signatures.length === 0) fail("signatures must be a non-empty array");
  (signatures as unknown[]).forEach((entry, index) => {
    const { keyid, sig } = (entry ?? {}) as Record<string, unknown>;
    if (typeof keyid !== "string" || typeof sig !== "string" || !isBase64(sig)) fail(`signatures[${index}] must be { keyid: string, sig: base64 string }`);
  });
  return value as DsseEnvelope;
}

/**
 * Verifies an envelope against trusted keys (key id to public key) and its expected payload type: succeeds when a
 * signature by a trusted key id verifies. @returns the payload bytes and the key id that verified them.
 * @throws DsseError naming `where` and the key ids: unknown keys, or a signature that does not verify.
 */
export function verifyEnvelope(envelope: DsseEnvelope, payloadType: string, trusted: ReadonlyMap<string, KeyObject>, where: string): { payload: Buffer; keyid: string } {
  if (envelope.payloadType !== payloadType) throw new DsseError(`${where}: payloadType is '${envelope.payloadType}', expected '${payloadType}'`);
  const payload = Buffer.from(envelope.payload, "base64");
  const encoded = preAuthEncoding(envelope.payloadType, payload);
  const unknown: string[] = [];
  const failed: string[] = [];
  for (const { keyid, sig } of envelope.signatures) {
    const key = trusted.get(keyid);
    if (key === undefined) unknown.push(keyid);
    else if (verify(null, encoded, key, Buffer.from(sig, "base64"))) return { payload, keyid };
    else failed.push(keyid);
  }
  if (failed.length > 0) throw new DsseError(`${where}: the signature by trusted key ${failed.join(", ")} does not verify (the manifest or signature was changed)`);
  throw new DsseError(`${where}: signed by unknown key ${unknown.join(", ")} (trusted: ${[...trusted.keys()].join(", ") || "none configured"})`);
}

function isBase64(text: string): boolean {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(text) && text.length % 4 === 0;
}
