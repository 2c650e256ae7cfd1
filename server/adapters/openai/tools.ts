// Parses `tools` and `tool_choice` of a chat-completions request into the internal ToolDefinition and ToolChoice.
import type { ToolChoice, ToolDefinition } from "../../protocol/internal.js";
import { checkToolsLimits } from "../../protocol/request-limits.js";
import { own, invalid, isUnset, isObject, optionalBoolean, optionalObject, optionalString, quote, quoteList, requireObject, requireString, unsupported } from "./fields.js";

/** OpenAI's rule for function names. */
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Parses `tools`: a non-empty array of {type: "function", function: {name, description?, parameters?, strict?}}.
 * `strict` is type-checked and otherwise ignored: calls are always constrained to their parameters' schema.
 */
export function parseTools(value: unknown): ToolDefinition[] | undefined {
  if (isUnset(value)) return undefined;
  if (!Array.isArray(value) || value.length === 0) invalid("tools", "a non-empty array of function tools", value);
  checkToolsLimits("tools", value);
  const seen = new Set<string>();
  return value.map((item: unknown, index): ToolDefinition => {
    const path = `tools[${index}]`;
    const tool = requireObject(item, path);
    const type = own(tool, "type");
    if (type === "custom") unsupported(`${path}.type`, `${path}.type 'custom' is not supported: only 'function' tools are`);
    if (type !== "function") invalid(`${path}.type`, "'function'", type);
    const definition = requireObject(own(tool, "function"), `${path}.function`);
    const name = requireString(own(definition, "name"), `${path}.function.name`);
    if (!FUNCTION_NAME.test(name)) invalid(`${path}.function.name`, "1 to 64 letters, digits, underscores or dashes", name);
    if (seen.has(name)) unsupported(`${path}.function.name`, `${path}.function.name ${quote(name)} is defined twice: tool names must be unique`);
    seen.add(name);
    const description = optionalString(own(definition, "description"), `${path}.function.description`);
    // Omitted parameters mean a function that takes none (OpenAI's documented default).
    const parameters = optionalObject(own(definition, "parameters"), `${path}.function.parameters`) ?? { type: "object", properties: {} };
    optionalBoolean(own(definition, "strict"), `${path}.function.strict`);
    return description === undefined ? { name, parameters } : { name, description, parameters };
  });
}

/**
 * Parses `tool_choice`: "auto" | "none" | "required" (-> any) | {type: "function", function: {name}}.
 * "required" and a named tool need `tools`, and a named tool must be one of them.
 */
export function parseToolChoice(value: unknown, tools: readonly ToolDefinition[] | undefined): ToolChoice | undefined {
  if (isUnset(value)) return undefined;
  const rule = `'auto', 'none', 'required' or {type: 'function', function: {name}}`;
  if (value === "auto" || value === "none") return { type: value };
  if (value === "required") {
    if (!tools) unsupported("tool_choice", "tool_choice 'required' needs tools: no tools were given");
    return { type: "any" };
  }
  if (!isObject(value)) return invalid("tool_choice", rule, value);
  const choice = value;
  const type = own(choice, "type");
  if (type === "allowed_tools" || type === "custom") {
    unsupported("tool_choice.type", `tool_choice.type '${type}' is not supported: use 'function'`);
  }
  if (type !== "function") invalid("tool_choice.type", "'function'", type);
  const name = requireString(own(requireObject(own(choice, "function"), "tool_choice.function"), "name"), "tool_choice.function.name");
  if (!tools?.some((tool) => tool.name === name)) {
    const known = tools ? quoteList(tools.map((tool) => tool.name)) : "none were given";
    unsupported("tool_choice.function.name", `tool_choice.function.name ${quote(name)} is not one of the tools (${known})`);
  }
  return { type: "tool", name };
}
