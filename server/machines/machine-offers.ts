// What each machine endpoint offers for sale: its price on the configured network and asset, in the shapes of both
// x402 generations (the v2 route config the resource server turns into PAYMENT-REQUIRED, and v1 `accepts` entries),
// with the Bazaar discovery declaration agents browse catalogues by. Descriptions stay short: long ones have made
// endpoints unpayable in some clients.
import type { RouteConfig } from "@x402/core/server";
import { declareDiscoveryExtension } from "@x402/extensions/bazaar";
import { declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier";
import { TOOL_NAMES } from "../runs/contract.js";
import { MACHINE_ENGINES } from "./machine-request.js";
import type { PaymentsSettings } from "./payments-config.js";

/** The two paid endpoints. */
export type MachineEndpoint = "search" | "run";

/** Their paths (spec 4.7, 4.8). */
export const MACHINE_PATHS: Readonly<Record<MachineEndpoint, string>> = { search: "/v1/machines/searches", run: "/v1/machines/runs" };

const DESCRIPTIONS: Record<MachineEndpoint, string> = {
  search: "Web search agent run: answers instructions from the web.",
  run: "Agent run: instructions, tools, structured answer.",
};

const CREATED_EXAMPLE = { runId: "run_0123456789abcdef0123456789abcdef", status: "queued" };
const CREATED_SCHEMA = {
  type: "object",
  properties: { runId: { type: "string" }, status: { type: "string", enum: ["queued"] } },
  required: ["runId", "status"],
};

/** Each endpoint's body, as JSON Schema (Bazaar's input schema; the server's checks are create-request.ts's). */
const INPUT_SCHEMAS: Record<MachineEndpoint, Record<string, unknown>> = {
  search: {
    type: "object",
    properties: { instructions: { type: "string", description: "What to find out" } },
    required: ["instructions"],
    additionalProperties: false,
  },
  run: {
    type: "object",
    properties: {
      engine: { type: "string", enum: [...MACHINE_ENGINES] },
      input: {
        type: "object",
        properties: {
          instructions: { type: "string" },
          tools: { type: "array", items: { type: "string", enum: [...TOOL_NAMES] } },
          answerFormat: { type: "object" },
          reasoningFormat: { type: "object" },
        },
        required: ["instructions"],
      },
      // A pattern, not `format: "uri"`: the official Bazaar validator (Ajv without format plugins) warns on formats
      // and checks none.
      output: { type: "object", properties: { callbackUrl: { type: "string", pattern: "^https?://[^\\s]+$", description: "http(s) URL called when the run ends" } } },
    },
    required: ["engine", "input"],
    additionalProperties: false,
  },
};

const INPUT_EXAMPLES: Record<MachineEndpoint, Record<string, unknown>> = {
  search: { instructions: "Who maintains the x402 protocol?" },
  run: { engine: "tim", input: { instructions: "Summarise the x402 protocol in three sentences.", tools: ["web_search", "read_page"] } },
};

/** The x402 v2 route config of an endpoint, for @x402/core's HTTP resource server. */
export function machineRouteConfig(endpoint: MachineEndpoint, settings: PaymentsSettings): RouteConfig {
  return {
    accepts: {
      scheme: "exact",
      network: settings.network.caip2,
      payTo: settings.payTo,
      price: { amount: settings.prices[endpoint].atomic.toString(), asset: settings.asset.address, extra: { name: settings.asset.name, version: settings.asset.version } },
      maxTimeoutSeconds: settings.maxTimeoutSeconds,
    },
    description: DESCRIPTIONS[endpoint],
    mimeType: "application/json",
    serviceName: "loom",
    tags: endpoint === "search" ? ["search", "agent", "llm"] : ["agent", "llm"],
    extensions: {
      ...declareDiscoveryExtension({
        bodyType: "json",
        input: INPUT_EXAMPLES[endpoint],
        inputSchema: INPUT_SCHEMAS[endpoint],
        output: { example: CREATED_EXAMPLE, schema: CREATED_SCHEMA },
      }),
      [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false),
    },
  };
}

/** The x402 v1 `accepts` entry of an endpoint (v1 names its network: `base`), for the 402 body and v1 verification. */
export function v1Requirements(endpoint: MachineEndpoint, settings: PaymentsSettings, resourceUrl: string): Record<string, unknown> {
  return {
    scheme: "exact",
    network: settings.network.v1Name ?? settings.network.caip2,
    maxAmountRequired: settings.prices[endpoint].atomic.toString(),
    resource: resourceUrl,
    description: DESCRIPTIONS[endpoint],
    mimeType: "application/json",
    payTo: settings.payTo,
    maxTimeoutSeconds: settings.maxTimeoutSeconds,
    asset: settings.asset.address,
    // v1's discovery convention: the request and response shapes ride in outputSchema.
    outputSchema: { input: { type: "http", method: "POST", bodyType: "json", bodyFields: INPUT_SCHEMAS[endpoint].properties, discoverable: true }, output: CREATED_SCHEMA },
    extra: { name: settings.asset.name, version: settings.asset.version },
  };
}
