// DSSE: the pre-authentication encoding byte for byte, and every kind of tampering refused by name.
import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type DsseEnvelope, DsseError, RELEASE_PAYLOAD_TYPE, parseEnvelope, preAuthEncoding, signEnvelope, verifyEnvelope } from "./dsse.js";
import { keyIdOf } from "./keys.js";

const { privateKey, publicKey } = generateKeyPairSync("ed25519");
const keyid = keyIdOf(publicKey);
const trusted = new Map([[keyid, publicKey]]);
const payload = Buffer.from('{"version":"1.2.3"}');

describe("preAuthEncoding", () => {
  it("matches the DSSE specification's example", () => {
    expect(preAuthEncoding("http://example.com/HelloWorld", Buffer.from("hello world")).toString()).toBe("DSSEv1 29 http://example.com/HelloWorld 11 hello world");
  });

  it("counts bytes, not characters", () => {
    expect(preAuthEncoding("t/é", Buffer.from("ü")).toString("utf8")).toBe("DSSEv1 4 t/é 2 ü");
    expect(preAuthEncoding("", Buffer.alloc(0)).toString()).toBe("DSSEv1 0  0 ");
  });
});

describe("signEnvelope and verifyEnvelope", () => {
  const envelope = signEnvelope(payload, RELEASE_PAYLOAD_TYPE, privateKey, keyid);

  it("verifies an untouched envelope and returns the payload and key id", () => {
    expect(envelope).toMatchObject({ payloadType: RELEASE_PAYLOAD_TYPE, payload: payload.toString("base64"), signatures: [{ keyid }] });
    const verified = verifyEnvelope(parseEnvelope(JSON.parse(JSON.stringify(envelope)), "m.json"), RELEASE_PAYLOAD_TYPE, trusted, "m.json");
    expect(verified).toEqual({ payload, keyid });
  });

  it("refuses a changed payload", () => {
    const changed: DsseEnvelope = { ...envelope, payload: Buffer.from('{"version":"9.9.9"}').toString("base64") };
    expect(() => verifyEnvelope(changed, RELEASE_PAYLOAD_TYPE, trusted, "m.json")).toThrow(`m.json: the signature by trusted key ${keyid} does not verify`);
  });

  it("refuses a changed signature", () => {
    const sig = Buffer.from(envelope.signatures[0]!.sig, "base64");
    sig[0]! ^= 1;
    const changed: DsseEnvelope = { ...envelope, signatures: [{ keyid, sig: sig.toString("base64") }] };
    expect(() => verifyEnvelope(changed, RELEASE_PAYLOAD_TYPE, trusted, "m.json")).toThrow(DsseError);
  });

  it("refuses an unknown key id, naming it and the trusted ones", () => {
    const changed: DsseEnvelope = { ...envelope, signatures: [{ keyid: "0123456789abcdef", sig: envelope.signatures[0]!.sig }] };
    expect(() => verifyEnvelope(changed, RELEASE_PAYLOAD_TYPE, trusted, "m.json")).toThrow(`m.json: signed by unknown key 0123456789abcdef (trusted: ${keyid})`);
  });

  it("refuses a signature by another key under a trusted key id", () => {
    const other = generateKeyPairSync("ed25519").privateKey;
    const forged = signEnvelope(payload, RELEASE_PAYLOAD_TYPE, other, keyid);
    expect(() => verifyEnvelope(forged, RELEASE_PAYLOAD_TYPE, trusted, "m.json")).toThrow(/does not verify/);
  });

  it("refuses another payload type, even one signed as such", () => {
    const other = signEnvelope(payload, "application/json", privateKey, keyid);
    expect(() => verifyEnvelope(other, RELEASE_PAYLOAD_TYPE, trusted, "m.json")).toThrow(`m.json: payloadType is 'application/json', expected '${RELEASE_PAYLOAD_TYPE}'`);
    // The type is inside the signed bytes: relabelling the envelope breaks the signature.
    expect(() => verifyEnvelope({ ...other, payloadType: RELEASE_PAYLOAD_TYPE }, RELEASE_PAYLOAD_TYPE, trusted, "m.json")).toThrow(/does not verify/);
  });
});

describe("parseEnvelope", () => {
  it.each([
    [[], /m\.json: not a DSSE envelope: must be a JSON object/],
    [{ payloadType: "", payload: "", signatures: [] }, /payloadType must be a non-empty string/],
    [{ payloadType: "t", payload: "not base64!", signatures: [] }, /payload must be a base64 string/],
    [{ payloadType: "t", payload: "", signatures: [] }, /signatures must be a non-empty array/],
    [{ payloadType: "t", payload: "", signatures: [{ keyid: "k" }] }, /signatures\[0\] must be \{ keyid: string, sig: base64 string \}/],
  ])("refuses %j", (value, message) => {
    expect(() => parseEnvelope(value, "m.json")).toThrow(message);
  });
});

describe("parseEnvelope, every field", () => {
  const sig = Buffer.alloc(64, 1).toString("base64");
  const envelope = { payloadType: "t", payload: "eyJ9", signatures: [{ keyid: "k", sig }] };

  it("returns a well-formed envelope as it is", () => {
    expect(parseEnvelope(envelope, "m.json")).toBe(envelope);
    const empty = { ...envelope, payload: "" };
    expect(parseEnvelope(empty, "m.json")).toBe(empty);
  });

  it("refuses each malformed field with a DsseError naming the file", () => {
    const cases: Array<[unknown, string]> = [
      [null, "must be a JSON object"],
      ["envelope", "must be a JSON object"],
      [{ ...envelope, payloadType: 7 }, "payloadType must be a non-empty string"],
      [{ ...envelope, payload: 7 }, "payload must be a base64 string"],
      [{ ...envelope, payload: "abc" }, "payload must be a base64 string"],
      [{ ...envelope, payload: "!abc" }, "payload must be a base64 string"],
      [{ ...envelope, payload: "abc!" }, "payload must be a base64 string"],
      [{ ...envelope, payload: "ab=c" }, "payload must be a base64 string"],
      [{ ...envelope, signatures: { 0: envelope.signatures[0] } }, "signatures must be a non-empty array"],
      [{ ...envelope, signatures: [envelope.signatures[0], { keyid: 7, sig }] }, "signatures[1] must be { keyid: string, sig: base64 string }"],
      [{ ...envelope, signatures: [{ keyid: "k", sig: 7 }] }, "signatures[0] must be { keyid: string, sig: base64 string }"],
      [{ ...envelope, signatures: [{ keyid: "k", sig: "not base64!" }] }, "signatures[0] must be { keyid: string, sig: base64 string }"],
      [{ ...envelope, signatures: [null] }, "signatures[0] must be { keyid: string, sig: base64 string }"],
    ];
    for (const [value, message] of cases) {
      let thrown: unknown;
      try {
        parseEnvelope(value, "feed/m.json");
      } catch (error) {
        thrown = error;
      }
      expect(thrown, message).toBeInstanceOf(DsseError);
      expect((thrown as DsseError).name).toBe("DsseError");
      expect((thrown as DsseError).message).toBe(`feed/m.json: not a DSSE envelope: ${message}`);
    }
  });
});

describe("verifyEnvelope, several signatures", () => {
  const second = generateKeyPairSync("ed25519");
  const secondId = keyIdOf(second.publicKey);

  it("passes when any trusted signature verifies, and names every trusted key whose signature does not", () => {
    const envelope = signEnvelope(payload, RELEASE_PAYLOAD_TYPE, privateKey, keyid);
    const both = new Map([[keyid, publicKey], [secondId, second.publicKey]]);
    const forged = { ...envelope, signatures: [{ keyid: secondId, sig: envelope.signatures[0]!.sig }, ...envelope.signatures] };
    expect(verifyEnvelope(forged, RELEASE_PAYLOAD_TYPE, both, "m.json").keyid).toBe(keyid);
    const bothForged = { ...envelope, signatures: [{ keyid: secondId, sig: envelope.signatures[0]!.sig }, { keyid, sig: Buffer.alloc(64).toString("base64") }, { keyid: "stranger", sig: "" }] };
    expect(() => verifyEnvelope(bothForged, RELEASE_PAYLOAD_TYPE, both, "m.json")).toThrow(
      new DsseError(`m.json: the signature by trusted key ${secondId}, ${keyid} does not verify (the manifest or signature was changed)`),
    );
  });

  it("names every unknown key and the trusted ones, or that none is configured", () => {
    const envelope = signEnvelope(payload, RELEASE_PAYLOAD_TYPE, privateKey, keyid);
    const twice = { ...envelope, signatures: [...envelope.signatures, { keyid: "other", sig: envelope.signatures[0]!.sig }] };
    expect(() => verifyEnvelope(twice, RELEASE_PAYLOAD_TYPE, new Map([[secondId, second.publicKey], ["third", second.publicKey]]), "m.json")).toThrow(
      new DsseError(`m.json: signed by unknown key ${keyid}, other (trusted: ${secondId}, third)`),
    );
    expect(() => verifyEnvelope(envelope, RELEASE_PAYLOAD_TYPE, new Map(), "m.json")).toThrow(new DsseError(`m.json: signed by unknown key ${keyid} (trusted: none configured)`));
  });
});
