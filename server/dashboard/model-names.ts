// The model names the quick start shows: each wire format has slugs of its own (`service/tim-...-27b` for chat
// completions and responses, `service/<family>-marathon` for messages; server/models.ts), and a name of one format is
// a 404 in the other, so every name says which APIs take it.
import type { ServedModel } from "../models.js";
import type { WireFormat } from "../protocol/internal.js";

/** One name a client may send as `model`. */
export interface ServedModelName {
  id: string;
  /** The formats that take it: "openai" (/v1/chat/completions, /v1/responses), "anthropic" (/v1/messages). */
  formats: WireFormat[];
  /** The default of some format: the first model's first slug in it (what the quick start's snippets use). */
  default: boolean;
}

const FORMATS: readonly WireFormat[] = ["openai", "anthropic"];

/** Every slug of `entries`, in order (chat-completions slugs of a model before its messages slugs), with its formats. */
export function servedModelNames(entries: readonly Pick<ServedModel, "slugs">[]): ServedModelName[] {
  const names = new Map<string, ServedModelName>();
  for (const entry of entries) {
    for (const format of FORMATS) {
      for (const id of entry.slugs[format]) {
        const name = names.get(id) ?? { id, formats: [], default: false };
        if (!name.formats.includes(format)) name.formats.push(format);
        names.set(id, name);
      }
    }
  }
  // The first model is the default (the `default` alias, and what agent runs pick): its first slug per format.
  for (const format of FORMATS) {
    const first = entries[0]?.slugs[format][0];
    if (first !== undefined) names.get(first)!.default = true;
  }
  return [...names.values()];
}
