// What the agent loop sees of a tool: its name, what it is for, the JSON Schema of its arguments, and how to run it.

/** What a tool is given besides its arguments. */
export interface ToolContext {
  /** Aborted when the run is cancelled or times out: a tool stops its I/O then. */
  signal: AbortSignal;
}

/**
 * A tool an agent run may call. The loop constrains the model's calls to `parameters` by grammar, runs the tool, and
 * gives the model its result as text (a thrown error's message is given to the model too, as the tool's result).
 */
export interface RunTool {
  /** The name the model calls it by (`web_search`, `read_page`). */
  readonly name: string;
  /** One or two sentences for the model: what it does and when to use it. */
  readonly description: string;
  /** JSON Schema of the arguments object (the subset the grammar supports: engine/grammar). */
  readonly parameters: Record<string, unknown>;
  /**
   * Runs the tool on arguments that validate against `parameters`.
   * @returns the result as text for the model, bounded in size by the tool.
   * @throws Error whose message tells the model what went wrong (it is fed back as the tool's result).
   */
  run(args: Record<string, unknown>, context: ToolContext): Promise<string>;
}
