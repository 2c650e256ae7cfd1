// The served models: public slugs per wire format mapped to loaded models and their engines. Default slugs follow
// the spec's forms with the local model's name filled in: `service/tim-<base>-27b` for chat completions and
// `service/<family>-marathon` for messages.
import { basename } from "node:path";
import type { ServingEngine } from "../engine/engine.js";
import type { ModelInfo } from "../engine/host/messages.js";
import type { PromptCounter } from "../engine/prompt-counter.js";
import type { RoutingCounters } from "./cluster/routing.js";
import type { ServedModels, WireFormat } from "./protocol/internal.js";

/** One loaded model and the slugs it answers to. */
export interface ServedModel {
  model: ModelInfo;
  engine: ServingEngine;
  slugs: Record<WireFormat, string[]>;
  /** Unix seconds when it was loaded (the `created` of /v1/models). */
  created: number;
  /** Counts prompts on the HTTP thread for admission (the platform's token limits); without it, the engine counts. */
  promptCounter?: PromptCounter;
  /**
   * The model's engine in a dedicated pool of workers (gateways); absent, a request of an organization with a pool
   * is refused (`loom serve` has no pools).
   */
  poolEngine?: (pool: string) => ServingEngine;
  /** What a gateway's routing did for the model, every pool together (for /metrics). */
  routing?: () => RoutingCounters;
}

/** The engine a request runs on: the model's own, or its engine in the organization's dedicated pool. */
export function engineFor(served: ServedModel, pool: string | undefined): ServingEngine | undefined {
  if (pool === undefined) return served.engine;
  return served.poolEngine?.(pool);
}

/** The name /metrics (and the dashboard's live load) labels a model with: its first chat-completions slug, else its first messages slug. */
export function metricsName(served: Pick<ServedModel, "slugs">): string {
  return served.slugs.openai[0] ?? served.slugs.anthropic[0]!;
}

/** Lower-case words joined by dashes. */
function slugify(text: string): string {
  return text.toLowerCase().replace(/\.gguf$/, "").replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "") || "model";
}

/** The spec-form slugs for a model file or directory: base from its name, family from its architecture. */
export function defaultSlugs(model: ModelInfo): Record<WireFormat, string[]> {
  const base = slugify(basename(model.path));
  const family = slugify(model.architecture);
  return { openai: [`service/tim-${base}-27b`], anthropic: [`service/${family}-marathon`] };
}

/** Finds the engine behind a slug; implements the adapters' view of what is served. */
export class ModelRegistry implements ServedModels {
  #entries: readonly ServedModel[];

  /** @throws Error when two models answer to one slug in one format (configure `slugs` to tell them apart). */
  constructor(entries: readonly ServedModel[]) {
    checkDistinctSlugs(entries);
    this.#entries = entries;
  }

  /** The models served now. */
  get entries(): readonly ServedModel[] {
    return this.#entries;
  }

  /**
   * Serves `entries` from now on (a gateway's models change as workers come and go); requests already running keep
   * their engines. @throws Error as the constructor does, leaving the served models as they were.
   */
  replace(entries: readonly ServedModel[]): void {
    checkDistinctSlugs(entries);
    this.#entries = entries;
  }

  slugs(format: WireFormat): readonly string[] {
    return this.#entries.flatMap((entry) => entry.slugs[format]);
  }

  hasVision(): boolean {
    return false; // no vision encoder in the engine yet
  }

  /** The served model behind a slug in a format, if any. */
  find(slug: string, format: WireFormat): ServedModel | undefined {
    return this.entries.find((entry) => entry.slugs[format].includes(slug));
  }

  /** Every slug of every format, with its model (for /v1/models). */
  listing(): Array<{ id: string; created: number }> {
    const ids = new Map<string, number>();
    for (const entry of this.entries) for (const slug of [...entry.slugs.openai, ...entry.slugs.anthropic]) ids.set(slug, entry.created);
    return [...ids].map(([id, created]) => ({ id, created }));
  }
}

function checkDistinctSlugs(entries: readonly ServedModel[]): void {
  for (const format of ["openai", "anthropic"] as const) {
    const seen = new Set<string>();
    for (const entry of entries) {
      for (const slug of entry.slugs[format]) {
        if (seen.has(slug)) throw new Error(`two models answer to '${slug}' (${format}); give them distinct slugs in the config`);
        seen.add(slug);
      }
    }
  }
}
