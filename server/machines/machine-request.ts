// The machine endpoints' create bodies (spec 2.10), checked before any payment is asked for: a bad body is a 400 naming
// the field, so nobody pays for a request that cannot run.
import { type RunSpec, TOOL_NAMES, type ToolName } from "../runs/contract.js";
import { RUN_LIMITS } from "../runs/create-request.js";
import type { EngineName } from "../runs/engines.js";
import { array, choice, formatsAndCallback, invalid, object, text } from "../runs/request-fields.js";
import type { MachineEndpoint } from "./machine-offers.js";

/** Engines of paid full runs (spec 2.10). */
export const MACHINE_ENGINES = ["tim", "tim-edge", "timini", "tim-extB", "tim-extB-heavy"] as const;

/** The tools every search run gets. */
const SEARCH_TOOLS: readonly ToolName[] = ["web_search", "read_page"];

/**
 * A machine endpoint's body as the RunSpec its run will run. Search runs take the configured `searchEngine` with
 * web_search and read_page.
 * @param checkSchema compiles a JSON Schema for structured output, throwing a ProtocolError naming `field`.
 * @throws ProtocolError (400) naming the first bad field.
 */
export function parseMachineBody(endpoint: MachineEndpoint, body: unknown, searchEngine: EngineName, checkSchema: (schema: Record<string, unknown>, field: string) => void): RunSpec {
  const base = { content: [], resources: [], skills: [], timeoutSeconds: RUN_LIMITS.defaultTimeoutSeconds };
  if (endpoint === "search") {
    const top = object("body", body, ["instructions"]);
    if (top.instructions === undefined) throw invalid("instructions", "instructions is required: what the search should find out");
    const instructions = text("instructions", top.instructions, RUN_LIMITS.maxInstructionsChars);
    return { ...base, engine: searchEngine, instructions, tools: SEARCH_TOOLS.map((id) => ({ id, options: {} })) };
  }
  const top = object("body", body, ["engine", "input", "output"]);
  if (top.engine === undefined) throw invalid("engine", `engine is required: one of ${MACHINE_ENGINES.join(", ")}`);
  const engine = choice("engine", top.engine, MACHINE_ENGINES);
  if (top.input === undefined) throw invalid("input", "input is required: {instructions, tools, answerFormat, reasoningFormat}");
  const input = object("input", top.input, ["instructions", "tools", "answerFormat", "reasoningFormat"]);
  if (input.instructions === undefined) throw invalid("input.instructions", "input.instructions is required: the task for the agent");
  const spec: RunSpec = { ...base, engine, instructions: text("input.instructions", input.instructions, RUN_LIMITS.maxInstructionsChars), tools: [] };
  if (input.tools !== undefined) {
    const seen = new Set<string>();
    spec.tools = array("input.tools", input.tools, TOOL_NAMES.length).map((item, index) => {
      const id = choice(`input.tools[${index}]`, item, TOOL_NAMES, "an unknown tool");
      if (seen.has(id)) throw invalid(`input.tools[${index}]`, `input.tools[${index}]: the tool '${id}' is listed twice`);
      seen.add(id);
      return { id, options: {} };
    });
  }
  Object.assign(spec, formatsAndCallback(input, top.output, checkSchema));
  return spec;
}
