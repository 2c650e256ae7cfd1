// The Anthropic `tools` and `tool_choice` fields: client tools with a JSON schema, and how the model must use them.
// Server tools (web search, bash, ...) have a `type` of their own and are rejected: this server runs no tools.
import type { ToolChoice, ToolDefinition } from "../../protocol/internal.js";
import { checkToolsLimits } from "../../protocol/request-limits.js";
import { child, invalid, isUnset, own, readArray, readBoolean, readObject, readString } from "./fields.js";

/** Anthropic's rule for tool names. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The `tool_choice` types. */
const CHOICE_TYPES = ["auto", "any", "none", "tool"] as const;

/** Parses `tools`: [{name, description?, input_schema: {type: "object", ...}}]; names must be unique. */
export function parseTools(value: unknown, param: string): ToolDefinition[] {
  const seen = new Set<string>();
  const items = readArray(value, param);
  checkToolsLimits(param, items);
  return items.map((item, index) => {
    const path = child(param, index);
    const tool = readObject(item, path);
    const type = own(tool, "type");
    if (!isUnset(type) && type !== "custom") {
      throw invalid(child(path, "type"), 'must be "custom" or absent: server tools are not supported, define the tool with an input_schema', type);
    }
    const name = own(tool, "name");
    if (typeof name !== "string" || !TOOL_NAME.test(name)) {
      throw invalid(child(path, "name"), "must be a string of 1 to 64 letters, digits, underscores or hyphens", name);
    }
    if (seen.has(name)) throw invalid(child(path, "name"), `must be unique: tool "${name}" is defined twice`);
    seen.add(name);
    const description = own(tool, "description");
    const schemaPath = child(path, "input_schema");
    const schema = readObject(own(tool, "input_schema"), schemaPath);
    if (own(schema, "type") !== "object") {
      throw invalid(child(schemaPath, "type"), 'must be "object": a tool\'s input is a JSON object', own(schema, "type"));
    }
    const definition: ToolDefinition = { name, parameters: schema };
    if (!isUnset(description)) definition.description = readString(description, child(path, "description"));
    return definition;
  });
}

/**
 * Parses `tool_choice`: {type: "auto" | "any" | "none"} or {type: "tool", name} naming one of `tools`.
 * Forcing tool use ("any", "tool") needs tools to choose from. `disable_parallel_tool_use` allows at most one call.
 */
export function parseToolChoice(value: unknown, param: string, tools: readonly ToolDefinition[] | undefined): ToolChoice & { single?: boolean } {
  const choice = readObject(value, param);
  const type = own(choice, "type");
  if (!CHOICE_TYPES.includes(type as (typeof CHOICE_TYPES)[number])) {
    throw invalid(child(param, "type"), 'must be one of "auto", "any", "none", "tool"', type);
  }
  const parallel = own(choice, "disable_parallel_tool_use");
  const single = isUnset(parallel) ? false : readBoolean(parallel, child(param, "disable_parallel_tool_use"));
  if ((type === "any" || type === "tool") && (tools === undefined || tools.length === 0)) {
    throw invalid(param, `type "${type}" forces tool use and needs a non-empty "tools" list`);
  }
  if (type === "tool") {
    const name = own(choice, "name");
    if (typeof name !== "string" || !tools?.some((tool) => tool.name === name)) {
      const names = tools?.map((tool) => tool.name).join(", ") ?? "";
      throw invalid(child(param, "name"), `must name one of the tools (${names})`, name);
    }
    return { type: "tool", name, ...(single ? { single } : {}) };
  }
  return { type: type as "auto" | "any" | "none", ...(single ? { single } : {}) };
}
