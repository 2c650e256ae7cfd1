// The offers as the x402 tooling reads them: each endpoint's Bazaar discovery declaration, as the resource server
// publishes it in the 402 (with the request's method), passes the official validator (@x402/extensions'
// validateDiscoveryExtension: Ajv without format plugins) with no warning, and its input schema still describes the
// bodies the endpoints take.
import { bazaarResourceServerExtension, validateDiscoveryExtension } from "@x402/extensions/bazaar";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MACHINE_PATHS, type MachineEndpoint, machineRouteConfig } from "./machine-offers.js";
import { resolvePaymentsConfig } from "./payments-config.js";

const SETTINGS = resolvePaymentsConfig({ payTo: "0x1111111111111111111111111111111111111111", settlement: { mode: "facilitator", url: "https://facilitator.example" } });

type Discovery = Parameters<typeof validateDiscoveryExtension>[0];

/** The endpoint's Bazaar declaration as the 402 carries it: the resource server adds the request's method. */
function published(endpoint: MachineEndpoint): Discovery {
  const declared = (machineRouteConfig(endpoint, SETTINGS).extensions as Record<string, unknown>).bazaar;
  return bazaarResourceServerExtension.enrichDeclaration!(declared, { method: "POST", path: MACHINE_PATHS[endpoint], adapter: {} }) as Discovery;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the Bazaar discovery declaration", () => {
  it.each(["search", "run"] as const)("of %s passes the official validator without a warning", (endpoint) => {
    const warned: unknown[][] = [];
    for (const method of ["warn", "error", "log"] as const) vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void warned.push(args));
    expect(validateDiscoveryExtension(published(endpoint))).toEqual({ valid: true });
    expect(warned).toEqual([]);
  });

  it("describes a run's callback URL as an http(s) URL", () => {
    const bazaar = published("run") as unknown as { info: { input: Record<string, unknown> } };
    const withCallback = (callbackUrl: unknown) => ({ ...bazaar, info: { ...bazaar.info, input: { ...bazaar.info.input, body: { engine: "tim", input: { instructions: "x" }, output: { callbackUrl } } } } }) as unknown as Discovery;
    expect(validateDiscoveryExtension(withCallback("https://example.com/hook"))).toEqual({ valid: true });
    expect(validateDiscoveryExtension(withCallback("http://127.0.0.1:8080/hook"))).toEqual({ valid: true });
    expect(validateDiscoveryExtension(withCallback("ftp://example.com/hook"))).toMatchObject({ valid: false });
    expect(validateDiscoveryExtension(withCallback("not a url"))).toMatchObject({ valid: false });
  });
});
