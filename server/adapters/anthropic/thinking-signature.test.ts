import { describe, expect, it } from "vitest";
import { ThinkingSigner } from "./thinking-signature.js";

describe("ThinkingSigner", () => {
  const signer = new ThinkingSigner("test-secret");

  it("round-trips: a signature verifies for its own text", () => {
    for (const text of ["", "short", "Let me think.\n\nStep 1: 2+2=4", "ünïcødé 🧠 思考", "a".repeat(100_000)]) {
      const signature = signer.sign(text);
      expect(signature).toMatch(/^[A-Za-z0-9+/]{43}=$/);
      expect(signer.verify(text, signature)).toBe(true);
    }
  });

  it("is deterministic per secret and differs across secrets, string or bytes", () => {
    expect(signer.sign("x")).toBe(new ThinkingSigner("test-secret").sign("x"));
    expect(signer.sign("x")).toBe(new ThinkingSigner(new TextEncoder().encode("test-secret")).sign("x"));
    expect(signer.sign("x")).not.toBe(new ThinkingSigner("other-secret").sign("x"));
    expect(ThinkingSigner.withRandomSecret().sign("x")).not.toBe(ThinkingSigner.withRandomSecret().sign("x"));
  });

  it("rejects tampered text and tampered signatures", () => {
    const text = "The answer is 4.";
    const signature = signer.sign(text);
    expect(signer.verify("The answer is 5.", signature)).toBe(false);
    expect(signer.verify(text + " ", signature)).toBe(false);
    expect(signer.verify(text, new ThinkingSigner("other").sign(text))).toBe(false);
    const flipped = (signature[0] === "A" ? "B" : "A") + signature.slice(1);
    expect(signer.verify(text, flipped)).toBe(false);
  });

  it("tells lone surrogates apart (UTF-8 would map both to U+FFFD)", () => {
    expect(signer.verify("\ud800", signer.sign("\udc00"))).toBe(false);
    expect(signer.verify("\ud800", signer.sign("\ufffd"))).toBe(false);
  });

  it("returns false, never throws, on malformed input", () => {
    const signature = signer.sign("t");
    const bad: unknown[] = [undefined, null, 1, {}, [], "", "not base64!", signature.slice(0, -1), signature + "=", `${signature.slice(0, -1)}A`, " " + signature];
    for (const value of bad) expect(signer.verify("t", value)).toBe(false);
    expect(signer.verify(undefined, signature)).toBe(false);
    expect(signer.verify(42, signature)).toBe(false);
  });

  it("refuses an empty secret", () => {
    expect(() => new ThinkingSigner("")).toThrow(TypeError);
    expect(() => new ThinkingSigner(new Uint8Array())).toThrow(TypeError);
  });
});
