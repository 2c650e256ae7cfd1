// Compiles chat templates with @huggingface/jinja, once per distinct template string.
// NOTE: calls to `raise_exception(...)` are redirected to RAISE_FUNCTION_NAME, which the renderer defines, so a template
// rejecting a conversation can be told apart from the engine failing (jinja's built-in throws a plain Error).

import { Template } from "@huggingface/jinja";
import { ChatTemplateError } from "./errors.js";

/** The variable that `raise_exception(...)` calls in a compiled template resolve to. */
export const RAISE_FUNCTION_NAME = "__loom_raise_exception";

/** Distinct templates kept compiled; a process normally sees one or two (one per loaded model). */
const CACHE_LIMIT = 32;
const compiled = new Map<string, Template>();

/**
 * The compiled form of `template`, parsed on first use and cached by its text.
 * @throws ChatTemplateError ("syntax") if the template is not valid Jinja.
 */
export function compileChatTemplate(template: string): Template {
  const cached = compiled.get(template);
  if (cached) return cached;
  let result: Template;
  try {
    result = new Template(template);
    redirectRaiseException(result.parsed);
  } catch (error) {
    throw new ChatTemplateError("syntax", errorMessage(error), { cause: error });
  }
  if (compiled.size >= CACHE_LIMIT) compiled.delete(compiled.keys().next().value as string);
  compiled.set(template, result);
  return result;
}

/** Renames the callee of every `raise_exception(...)` call in the syntax tree to RAISE_FUNCTION_NAME. */
function redirectRaiseException(root: unknown): void {
  const pending: unknown[] = [root];
  const seen = new Set<object>();
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== "object" || node === null || seen.has(node)) continue;
    seen.add(node);
    const fields = node as Record<string, unknown>;
    const callee = fields.callee as { type?: unknown; value?: unknown } | undefined;
    if (fields.type === "CallExpression" && callee?.type === "Identifier" && callee.value === "raise_exception") {
      callee.value = RAISE_FUNCTION_NAME;
    }
    for (const value of Object.values(fields)) if (typeof value === "object" && value !== null) pending.push(value);
  }
}

/** How many compiled templates are cached (for tests). */
export function compiledTemplateCount(): number {
  return compiled.size;
}

/** The message of a thrown value, whatever was thrown. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
