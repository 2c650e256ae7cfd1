// Engine names (spec 2.9, 2.10) are names for agent configurations: which served model runs the agent, whether it
// thinks, and its budgets. Every name has a documented default; the config file's `runs.engines` changes any of them.

/** Every engine name of the spec: legacy runs take five of them, machine runs five (issue 17). */
export const ENGINE_NAMES = ["tim", "tim-edge", "timini", "tim-extA", "tim-extA-heavy", "tim-extB", "tim-extB-heavy", "tim-1.5"] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

/** One agent configuration. */
export interface AgentEngine {
  /**
   * The served model's chat-completions slug or an alias of it (runs record its slug); undefined: the first served
   * model; null: this deployment has no model
   * for the name (creating a run with it is a 400 naming it).
   */
  model?: string | null;
  /** Reasoning on (the chat template's enable_thinking): `result.reasoning` then holds the model's thinking. */
  thinking: boolean;
  /** Most model turns; the last allowed turn may not call tools, so a run ends with an answer within it. */
  maxSteps: number;
  /** Most tool calls over the run; past it the next turn may not call tools. */
  maxToolCalls: number;
  /** Most tokens one model turn may generate (a run's `options.max_step_tokens` may lower it, not raise it). */
  maxStepTokens: number;
  /** The first N turns must call a tool (benchmarks; 0 in every default). */
  forcedToolTurns: number;
  /** Sampling temperature of every turn. */
  temperature: number;
}

const base = { thinking: false, forcedToolTurns: 0, temperature: 0.6 };
const light: Omit<AgentEngine, "thinking"> = { ...base, maxSteps: 4, maxToolCalls: 6, maxStepTokens: 512 };
const standard: Omit<AgentEngine, "thinking"> = { ...base, maxSteps: 8, maxToolCalls: 16, maxStepTokens: 1024 };
const heavy: Omit<AgentEngine, "thinking"> = { ...base, maxSteps: 24, maxToolCalls: 48, maxStepTokens: 4096 };

/** The defaults (docs/agent-runs.md): "edge" and "mini" are small budgets, "ext" thinks, "heavy" thinks longer. */
export const DEFAULT_ENGINES: Readonly<Record<EngineName, AgentEngine>> = Object.freeze({
  tim: { ...standard, thinking: false },
  "tim-edge": { ...light, thinking: false },
  timini: { ...light, thinking: false, maxStepTokens: 768 },
  "tim-extA": { ...standard, thinking: true, maxStepTokens: 2048 },
  "tim-extA-heavy": { ...heavy, thinking: true },
  "tim-extB": { ...standard, thinking: true, maxStepTokens: 2048 },
  "tim-extB-heavy": { ...heavy, thinking: true },
  "tim-1.5": { ...standard, thinking: true, maxSteps: 12, maxToolCalls: 24, maxStepTokens: 2048 },
});

/** The config file's `runs.engines`: per name, the fields to change. */
export type EngineOverrides = Partial<Record<EngineName, Partial<AgentEngine>>>;

/** The engines with the config's changes applied. */
export function resolveEngines(overrides: EngineOverrides = {}): Record<EngineName, AgentEngine> {
  const engines = {} as Record<EngineName, AgentEngine>;
  for (const name of ENGINE_NAMES) engines[name] = { ...DEFAULT_ENGINES[name], ...(overrides[name] ?? {}) };
  return engines;
}
