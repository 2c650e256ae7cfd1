// The legacy run create body (spec 2.9) checked field by field: every rule, every bound, unknown fields refused, and
// each error naming the field as the client wrote it (`input.tools[1].id`).
import { type RunSpec, type RunToolChoice, TOOL_NAMES, type ToolName } from "./contract.js";
import { array, choice, formatsAndCallback, integer, invalid, object, strings, text } from "./request-fields.js";

/** Engines of legacy runs (spec 2.9); machine runs take another list (issue 17). */
export const LEGACY_ENGINES = ["tim", "tim-edge", "tim-extA", "tim-extA-heavy", "tim-1.5"] as const;

/** The bounds of a run request, documented in docs/agent-runs.md. */
export const RUN_LIMITS = {
  /** Largest create body. */
  maxBodyBytes: 1024 * 1024,
  maxInstructionsChars: 100_000,
  maxContentItems: 64,
  maxContentChars: 100_000,
  maxResources: 64,
  maxResourceChars: 2048,
  maxSkills: 32,
  maxSkillChars: 10_000,
  maxAgentIdChars: 255,
  /** `options.timeout`, seconds: default and most. */
  defaultTimeoutSeconds: 600,
  maxTimeoutSeconds: 3600,
  /** `options.max_step_tokens`: most (the default is the engine's). */
  maxStepTokens: 16_384,
} as const;

/** Each tool's options: name -> check (returns the option or throws naming it). */
const TOOL_OPTIONS: Record<ToolName, Record<string, (field: string, value: unknown) => unknown>> = {
  web_search: { limit: (field, value) => integer(field, value, 1, 10) },
  read_page: { maxChars: (field, value) => integer(field, value, 1000, 100_000) },
};

/**
 * A legacy create body as a RunSpec (engine checked against the list only: whether it has a model is the caller's).
 * @param checkSchema compiles a JSON Schema for structured output, throwing a ProtocolError naming `field`.
 * @throws ProtocolError (400) naming the first bad field.
 */
export function parseLegacyRunBody(body: unknown, checkSchema: (schema: Record<string, unknown>, field: string) => void): RunSpec {
  const top = object("body", body, ["engine", "input", "output", "options"]);
  if (top.engine === undefined) throw invalid("engine", `engine is required: one of ${LEGACY_ENGINES.join(", ")}`);
  const engine = choice("engine", top.engine, LEGACY_ENGINES);
  if (top.input === undefined) throw invalid("input", "input is required: {instructions, content, tools, ...}");
  const input = object("input", top.input, ["instructions", "tools", "content", "resources", "skills", "agentId", "answerFormat", "reasoningFormat"]);

  const instructions = input.instructions === undefined ? undefined : text("input.instructions", input.instructions, RUN_LIMITS.maxInstructionsChars);
  const content = input.content === undefined ? [] : array("input.content", input.content, RUN_LIMITS.maxContentItems).map((item, index) => {
    const field = `input.content[${index}]`;
    const entry = object(field, item, ["text"]);
    if (entry.text === undefined) throw invalid(`${field}.text`, `${field}.text is required`);
    return text(`${field}.text`, entry.text, RUN_LIMITS.maxContentChars);
  });
  if (instructions === undefined && content.length === 0) {
    throw invalid("input.instructions", "input.instructions or input.content is required: give the task as input.instructions (a string) or as input.content ([{\"text\": ...}])");
  }
  const spec: RunSpec = {
    engine,
    ...(instructions !== undefined ? { instructions } : {}),
    content,
    resources: input.resources === undefined ? [] : strings("input.resources", input.resources, RUN_LIMITS.maxResources, RUN_LIMITS.maxResourceChars),
    skills: input.skills === undefined ? [] : strings("input.skills", input.skills, RUN_LIMITS.maxSkills, RUN_LIMITS.maxSkillChars),
    tools: input.tools === undefined ? [] : tools("input.tools", input.tools),
    timeoutSeconds: RUN_LIMITS.defaultTimeoutSeconds,
  };
  if (input.agentId !== undefined) spec.agentId = text("input.agentId", input.agentId, RUN_LIMITS.maxAgentIdChars);
  Object.assign(spec, formatsAndCallback(input, top.output, checkSchema));
  if (top.options !== undefined) {
    const options = object("options", top.options, ["timeout", "max_step_tokens"]);
    if (options.timeout !== undefined) spec.timeoutSeconds = integer("options.timeout", options.timeout, 1, RUN_LIMITS.maxTimeoutSeconds);
    if (options.max_step_tokens !== undefined) spec.maxStepTokens = integer("options.max_step_tokens", options.max_step_tokens, 1, RUN_LIMITS.maxStepTokens);
  }
  return spec;
}

/** A run's tools: `{id, options}` items, each tool at most once. */
function tools(field: string, value: unknown): RunToolChoice[] {
  const seen = new Set<string>();
  return array(field, value, TOOL_NAMES.length * 4).map((item, index) => {
    const itemField = `${field}[${index}]`;
    const entry = object(itemField, item, ["id", "options"]);
    if (entry.id === undefined) throw invalid(`${itemField}.id`, `${itemField}.id is required: one of ${TOOL_NAMES.join(", ")}`);
    const id = choice(`${itemField}.id`, entry.id, TOOL_NAMES, "an unknown tool");
    if (seen.has(id)) throw invalid(`${itemField}.id`, `${itemField}.id: the tool '${id}' is listed twice`);
    seen.add(id);
    const rules = TOOL_OPTIONS[id];
    const options = entry.options === undefined ? {} : object(`${itemField}.options`, entry.options, Object.keys(rules));
    const checked: Record<string, unknown> = {};
    for (const [name, option] of Object.entries(options)) checked[name] = rules[name]!(`${itemField}.options.${name}`, option);
    return { id, options: checked };
  });
}
