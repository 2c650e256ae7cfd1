// The names a served model answers to: its spec-form slugs, and the aliases beside them (its own name, `default` for
// the first model), with the rules that keep every name pointing at one model.
import { describe, expect, it } from "vitest";
import { ModelRegistry, type ServedModel, defaultSlugs, ownName } from "./models.js";
import { SCRIPTED_MODEL, ScriptedEngine } from "./testing/scripted-engine.js";

/** A served model loaded from `path`, with the spec-form slugs unless given others. */
function served(path: string, slugs?: ServedModel["slugs"], created = 1, architecture = "llama"): ServedModel {
  const model = { ...SCRIPTED_MODEL, path, architecture };
  return { model, engine: new ScriptedEngine(), slugs: slugs ?? defaultSlugs(model), created };
}

describe("ownName", () => {
  it("is the file's or directory's base name without .gguf, lower-cased, other characters as dashes", () => {
    expect(ownName({ path: "/pkg/models/stories260K/stories260K.gguf" })).toBe("stories260k");
    expect(ownName({ path: "/home/me/.cache/loom/models/HuggingFaceTB/SmolLM2-135M-Instruct" })).toBe("smollm2-135m-instruct");
    expect(ownName({ path: "/m/SmolLM2-135M-Instruct/" })).toBe("smollm2-135m-instruct");
    expect(ownName({ path: "C/Qwen3 0.6B (q8_0).GGUF" })).toBe("qwen3-0.6b--q8_0-");
    expect(ownName({ path: "/" })).toBeUndefined();
    // A split model is named by its first part: the name stands for the whole model.
    expect(ownName({ path: "/c/models/Qwen/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M-00001-of-00002.gguf" })).toBe("qwen3-8b-q4_k_m");
    expect(defaultSlugs({ path: "/c/Qwen3-8B-Q4_K_M-00001-of-00002.gguf", architecture: "qwen3" } as never).openai).toEqual(["service/tim-qwen3-8b-q4-k-m-27b"]);
  });
});

describe("ModelRegistry aliases", () => {
  const stories = served("/pkg/models/stories260K/stories260K.gguf");
  const smol = served("/cache/SmolLM2-135M-Instruct", undefined, 2, "smollm");
  const registry = new ModelRegistry([stories, smol]);

  it("keeps the spec's slugs and adds the model's own name and, for the first model, `default`", () => {
    expect(stories.slugs).toEqual({ openai: ["service/tim-stories260k-27b"], anthropic: ["service/llama-marathon"] });
    expect([...registry.aliases("openai")]).toEqual([
      ["stories260k", "service/tim-stories260k-27b"],
      ["default", "service/tim-stories260k-27b"],
      ["smollm2-135m-instruct", "service/tim-smollm2-135m-instruct-27b"],
    ]);
  });

  it("resolves a name to the slug it stands for, in each format the model is served in", () => {
    expect(registry.resolve("service/tim-stories260k-27b", "openai")).toBe("service/tim-stories260k-27b");
    expect(registry.resolve("stories260k", "openai")).toBe("service/tim-stories260k-27b");
    expect(registry.resolve("default", "anthropic")).toBe("service/llama-marathon");
    expect(registry.resolve("smollm2-135m-instruct", "anthropic")).toBe("service/smollm-marathon");
    expect(registry.resolve("nope", "openai")).toBeUndefined();
    expect(registry.find("stories260k", "openai")).toBe(stories);
    expect(registry.find("smollm2-135m-instruct", "openai")).toBe(smol);
  });

  it("lists the slugs first, then the aliases, each with its model's load time; names lists a format's", () => {
    expect(registry.listing()).toEqual([
      { id: "service/tim-stories260k-27b", created: 1, vision: false },
      { id: "service/llama-marathon", created: 1, vision: false },
      { id: "service/tim-smollm2-135m-instruct-27b", created: 2, vision: false },
      { id: "service/smollm-marathon", created: 2, vision: false },
      { id: "stories260k", created: 1, vision: false },
      { id: "default", created: 1, vision: false },
      { id: "smollm2-135m-instruct", created: 2, vision: false },
    ]);
    expect(registry.names("openai")).toEqual(["service/tim-stories260k-27b", "service/tim-smollm2-135m-instruct-27b", "stories260k", "default", "smollm2-135m-instruct"]);
  });

  it("gives an alias to the first model only when two models would share it", () => {
    const first = served("/a/model.gguf", { openai: ["service/tim-a-27b"], anthropic: ["service/a-marathon"] });
    const second = served("/b/model.gguf", { openai: ["service/tim-b-27b"], anthropic: ["service/b-marathon"] });
    const twins = new ModelRegistry([first, second]);
    expect([...twins.aliases("openai")]).toEqual([["model", "service/tim-a-27b"], ["default", "service/tim-a-27b"]]);
    expect(twins.find("model", "anthropic")).toBe(first);
    // A second model whose own name is `default` does not take the first model's alias either.
    const named = new ModelRegistry([first, served("/c/Default.gguf", { openai: ["service/tim-c-27b"], anthropic: [] })]);
    expect(named.resolve("default", "openai")).toBe("service/tim-a-27b");
  });

  it("gives no alias that is some model's slug, and none in a format the model is not served in", () => {
    const first = served("/a/x.gguf", { openai: ["service/tim-a-27b"], anthropic: [] });
    const second = served("/b/y.gguf", { openai: ["x"], anthropic: ["service/b-marathon"] });
    const registry = new ModelRegistry([first, second]);
    expect(registry.find("x", "openai")).toBe(second);
    expect([...registry.aliases("openai")]).toEqual([["default", "service/tim-a-27b"], ["y", "x"]]);
    expect([...registry.aliases("anthropic")]).toEqual([["y", "service/b-marathon"]]);
    expect(registry.resolve("default", "anthropic")).toBeUndefined();
    expect(registry.listing().map((model) => model.id)).toEqual(["service/tim-a-27b", "x", "service/b-marathon", "default", "y"]);
  });

  it("recomputes the aliases when the served models change", () => {
    const gateway = new ModelRegistry([]);
    expect(gateway.listing()).toEqual([]);
    gateway.replace([smol]);
    expect(gateway.resolve("default", "openai")).toBe("service/tim-smollm2-135m-instruct-27b");
    gateway.replace([stories, smol]);
    expect(gateway.resolve("default", "openai")).toBe("service/tim-stories260k-27b");
  });
});

describe("ModelRegistry vision", () => {
  const vision = { path: "/m/mmproj-gemma3.gguf", tokensPerImage: 258, imageSize: 896 };
  const seeing: ServedModel = { ...served("/m/gemma3.gguf", { openai: ["service/tim-gemma-27b"], anthropic: ["service/gemma-marathon"] }), model: { ...SCRIPTED_MODEL, path: "/m/gemma3.gguf", vision } };
  const blind = served("/m/qwen.gguf", { openai: ["service/tim-qwen-27b"], anthropic: ["service/qwen-marathon"] });
  const registry = new ModelRegistry([blind, seeing]);

  it("says a slug takes images when its served model's ModelInfo has vision, in its format or in either", () => {
    expect(registry.hasVision("service/tim-gemma-27b", "openai")).toBe(true);
    expect(registry.hasVision("service/gemma-marathon", "anthropic")).toBe(true);
    expect(registry.hasVision("service/gemma-marathon")).toBe(true);
    expect(registry.hasVision("service/gemma-marathon", "openai")).toBe(false);
    expect(registry.hasVision("service/tim-qwen-27b", "openai")).toBe(false);
    expect(registry.hasVision("unknown")).toBe(false);
  });

  it("lists every name with whether its model takes images", () => {
    expect(registry.listing().filter((model) => model.vision).map((model) => model.id)).toEqual(["service/tim-gemma-27b", "service/gemma-marathon", "gemma3"]);
  });
});
