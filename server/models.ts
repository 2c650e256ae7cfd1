// The served models: public slugs per wire format mapped to loaded models and their engines. Default slugs follow
// the spec's forms with the local model's name filled in: `service/tim-<base>-27b` for chat completions and
// `service/<family>-marathon` for messages.
//
// Besides its slugs, a model answers to aliases, in every format it has a slug in: its own name (see ownName: the
// base name of its file or directory, `stories260k`) and, for the first model served, `default`. An alias stands for
// the format's first slug of its model: requests are parsed, accounted, restricted and echoed under that slug. An
// alias is dropped when it equals any model's slug, or when an earlier model already has it (first model wins: with
// two models named `model.gguf`, only the first answers to `model`).
import { basename } from "node:path";
import type { ServingEngine } from "../engine/engine.js";
import type { ModelInfo } from "../engine/host/messages.js";
import type { PromptCounter } from "../engine/prompt-counter.js";
import type { RoutingCounters } from "./cluster/routing.js";
import type { ListedModel } from "./http/endpoint.js";
import { type ServedModels, type WireFormat, servedNames, servedSlug } from "./protocol/internal.js";
import type { OutputFormat } from "./protocol/run.js";

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

/** How a served model's output is written and read (server/protocol/run.ts): harmony channels, Mistral's, or tags. */
export function outputFormatOf(served: { model: Pick<ModelInfo, "syntax" | "thinkTags"> }): OutputFormat {
  const { syntax, thinkTags } = served.model;
  if (syntax === "harmony") return { syntax };
  if (syntax === "mistral" || syntax === "mistral-args") return { syntax, ...(thinkTags ? { thinkTags } : {}) };
  if (syntax === "gemma4") return { syntax, ...(thinkTags ? { thinkTags } : {}) };
  return {};
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
  return text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "") || "model";
}

/** A model path's base name without `.gguf`, and without a split model's `-00001-of-0000N` (it names the whole model). */
function modelStem(path: string): string {
  return basename(path).replace(/(-\d{5}-of-\d{5})?\.gguf$/i, "");
}

/**
 * A model's own name, one of its aliases: the base name of its file or directory without `.gguf` (and a split model's
 * `-00001-of-0000N`), lower-cased, each character outside a-z, 0-9, `.`, `_` and `-` replaced by `-`
 * (`stories260K.gguf` -> `stories260k`, `SmolLM2-135M-Instruct` -> `smollm2-135m-instruct`,
 * `Qwen3-8B-Q4_K_M-00001-of-00002.gguf` -> `qwen3-8b-q4_k_m`). Undefined when that leaves no name (`""`, `.`, `..`).
 */
export function ownName(model: Pick<ModelInfo, "path">): string | undefined {
  const name = modelStem(model.path).toLowerCase().replace(/[^a-z0-9._-]/g, "-");
  return name === "" || name === "." || name === ".." ? undefined : name;
}

/** The alias every deployment has for its first model, so that a request can name a model without knowing it. */
export const DEFAULT_ALIAS = "default";

/** The aliases of `entries`, in order (first model's first), each with its model (see the file comment for the rules). */
function aliasesOf(entries: readonly ServedModel[]): Array<{ alias: string; entry: ServedModel }> {
  const slugs = new Set(entries.flatMap((entry) => [...entry.slugs.openai, ...entry.slugs.anthropic]));
  const taken = new Map<string, ServedModel>();
  const offer = (alias: string | undefined, entry: ServedModel) => {
    if (alias !== undefined && !slugs.has(alias) && !taken.has(alias)) taken.set(alias, entry);
  };
  entries.forEach((entry, index) => {
    if (entry.slugs.openai.length + entry.slugs.anthropic.length === 0) return; // served in no format
    offer(ownName(entry.model), entry);
    if (index === 0) offer(DEFAULT_ALIAS, entry);
  });
  return [...taken].map(([alias, entry]) => ({ alias, entry }));
}

/** The spec-form slugs for a model file or directory: base from its name, family from its architecture. */
export function defaultSlugs(model: ModelInfo): Record<WireFormat, string[]> {
  const base = slugify(modelStem(model.path));
  const family = slugify(model.architecture);
  return { openai: [`service/tim-${base}-27b`], anthropic: [`service/${family}-marathon`] };
}

/** Finds the engine behind a slug or alias; implements the adapters' view of what is served. */
export class ModelRegistry implements ServedModels {
  #entries: readonly ServedModel[];
  #aliases: Array<{ alias: string; entry: ServedModel }>;

  /** @throws Error when two models answer to one slug in one format (configure `slugs` to tell them apart). */
  constructor(entries: readonly ServedModel[]) {
    checkDistinctSlugs(entries);
    this.#entries = entries;
    this.#aliases = aliasesOf(entries);
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
    this.#aliases = aliasesOf(entries);
  }

  slugs(format: WireFormat): readonly string[] {
    return this.#entries.flatMap((entry) => entry.slugs[format]);
  }

  /** The aliases a format accepts, each with the slug it stands for (its model's first slug in the format). */
  aliases(format: WireFormat): ReadonlyMap<string, string> {
    return new Map(this.#aliases.flatMap(({ alias, entry }) => (entry.slugs[format].length > 0 ? [[alias, entry.slugs[format][0]!] as const] : [])));
  }

  /** Every name a format accepts: the slugs, then the aliases (for messages naming what is served). */
  names(format: WireFormat): string[] {
    return servedNames(this, format);
  }

  /** The slug a name stands for in a format: the name itself when it is a slug, else its alias's slug. */
  resolve(name: string, format: WireFormat): string | undefined {
    return servedSlug(this, name, format);
  }

  /** Whether the model behind a slug (in `format`, else in either) takes images: its ModelInfo has `vision`. */
  hasVision(slug: string, format?: WireFormat): boolean {
    const formats: readonly WireFormat[] = format === undefined ? ["openai", "anthropic"] : [format];
    return this.entries.some((entry) => entry.model.vision !== undefined && formats.some((each) => entry.slugs[each].includes(slug)));
  }

  /** Whether the model behind a slug (in `format`, else in either) can reason: its ModelInfo's `reasons`. */
  canReason(slug: string, format?: WireFormat): boolean | undefined {
    const formats: readonly WireFormat[] = format === undefined ? ["openai", "anthropic"] : [format];
    return this.entries.find((entry) => formats.some((each) => entry.slugs[each].includes(slug)))?.model.reasons;
  }

  /** The served model behind a slug or alias in a format, if any. */
  find(name: string, format: WireFormat): ServedModel | undefined {
    const slug = this.resolve(name, format);
    return slug === undefined ? undefined : this.entries.find((entry) => entry.slugs[format].includes(slug));
  }

  /** Every slug of every format, then every alias, with its model's load time and whether it takes images (for /v1/models). */
  listing(): ListedModel[] {
    const ids = new Map<string, ServedModel>();
    for (const entry of this.entries) for (const slug of [...entry.slugs.openai, ...entry.slugs.anthropic]) ids.set(slug, entry);
    for (const { alias, entry } of this.#aliases) ids.set(alias, entry);
    return [...ids].map(([id, entry]) => ({ id, created: entry.created, vision: entry.model.vision !== undefined }));
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
