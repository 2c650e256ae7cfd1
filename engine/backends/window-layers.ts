// Which sliding-window layers a runner frees the KV of behind their window, shared by the backends: the engine then
// gives each block of a sequence's window a slot of their smaller caches (engine/kv/sliding-window.ts).
import { localKvSlots } from "../kv/sliding-window.js";
import { type ModelConfig, attentionWindow, layerKvWidth } from "../model/config.js";
import type { RunnerOptions } from "./runner.js";

/** The layers whose KV is freed behind the window, and the slots each of their caches holds. */
export interface WindowLayers {
  layers: ReadonlySet<number>;
  kvBlocks: number;
}

/**
 * The sliding-window layers whose KV the runner frees behind the window, and the slots their caches hold (enough for
 * every sequence's window, see localKvSlots); undefined when every layer keeps KV for every block: the model has no
 * window, `keepWindowKv` asks for it, or the slots would be no fewer than the `budgetBlocks` every layer would get.
 */
export function windowLayersOf(config: ModelConfig, options: RunnerOptions, budgetBlocks: number): WindowLayers | undefined {
  if (options.kvCache.keepWindowKv || config.sliding_window === undefined) return undefined;
  // Layers that read another layer's KV (Gemma 4's shared tail) hold none of their own.
  const layers = new Set(Array.from({ length: config.num_hidden_layers }, (_, i) => i).filter((i) => attentionWindow(config, i) > 0 && layerKvWidth(config, i) > 0));
  if (layers.size === 0) return undefined;
  const kvBlocks = localKvSlots(config.sliding_window, options.blockSize, options.maxSequences, options.maxBatchTokens);
  return kvBlocks < budgetBlocks ? { layers, kvBlocks } : undefined;
}
