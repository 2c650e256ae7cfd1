// `loom generate`: load a model, continue a prompt (optionally through the chat template), print the continuation.
import { parseArgs } from "node:util";
import type { ChatMessage } from "../chat/messages.js";
import { generate } from "../generate.js";
import { loadModel } from "../load.js";
import { preparePrompt } from "../prompt.js";
import type { EngineInput } from "../request.js";
import { ProgressBar } from "./progress-bar.js";
import { UsageError, parseInteger, parseNumber, parseBackend, parseSimd } from "./arguments.js";

export const GENERATE_USAGE = `Usage: loom generate --model <file-or-dir> --prompt <text> [options]

  --model <path>           GGUF file (a split one's first part) or Hugging Face model directory, or
                           hf:<org>/<repo>[:<quant>], downloaded into the cache as loom serve does
  --prompt <text>          text to continue (with --chat: the user message)
  --chat                   wrap the prompt in the model's chat template (a model without one gets the
                           default, ChatML, as in llama.cpp)
  --system <text>          system message (with --chat)
  --chat-template-kwargs <json>  extra template variables, e.g. '{"enable_thinking":false}'
  --max-tokens N           most tokens to generate (default 256, or what the context leaves after the prompt)
  --temperature T          0 = greedy (default 0.8)
  --top-p P                nucleus sampling (default 0.95)
  --top-k K                keep the K most likely tokens (default 40, 0 = off)
  --min-p P                drop tokens below P times the top probability (default 0.05)
  --repeat-penalty R       llama.cpp repetition penalty (default 1 = off)
  --frequency-penalty F    OpenAI frequency penalty (default 0)
  --presence-penalty P     OpenAI presence penalty (default 0)
  --seed S                 seed for reproducible sampling
  --stop <text>            stop sequence (repeatable)
  --context N              KV cache positions to allocate (default 4096, at most the model's context)
  --threads N              compute threads (default: all cores)
  --backend B              wasm, webgpu or auto (default auto: WebGPU on a hardware GPU, else WebAssembly)
  --simd S                 WebAssembly kernels: relaxed (relaxed SIMD int8 dot products), plain, or auto (default:
                           relaxed where this Node runs it correctly); the results are identical
  --json                   print one JSON object with text, tokens and speeds
`;

/** What the command that runs `loom generate` provides beyond the engine. */
export interface GenerateContext {
  /** The local path of a named model (the CLI downloads `hf:` models); default: the name as it is. */
  localModelPath?: (model: string) => Promise<string>;
}

/** Runs `loom generate` with the arguments after the subcommand. */
export async function runGenerate(argv: string[], context: GenerateContext = {}): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      model: { type: "string" }, prompt: { type: "string" }, chat: { type: "boolean" }, system: { type: "string" },
      "chat-template-kwargs": { type: "string" }, "max-tokens": { type: "string" }, temperature: { type: "string" },
      "top-p": { type: "string" }, "top-k": { type: "string" }, "min-p": { type: "string" },
      "repeat-penalty": { type: "string" }, "frequency-penalty": { type: "string" }, "presence-penalty": { type: "string" },
      seed: { type: "string" }, stop: { type: "string", multiple: true }, context: { type: "string" },
      threads: { type: "string" }, backend: { type: "string" }, simd: { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(GENERATE_USAGE);
    return;
  }
  if (!values.model) throw new UsageError("--model is required (a GGUF file or a Hugging Face model directory)");
  if (values.prompt === undefined) throw new UsageError("--prompt is required");
  if (values.system !== undefined && !values.chat) throw new UsageError("--system needs --chat");
  let templateKwargs: Record<string, unknown> = {};
  if (values["chat-template-kwargs"] !== undefined) {
    try {
      templateKwargs = JSON.parse(values["chat-template-kwargs"]);
    } catch {
      throw new UsageError("--chat-template-kwargs must be a JSON object");
    }
    if (templateKwargs === null || typeof templateKwargs !== "object" || Array.isArray(templateKwargs)) throw new UsageError("--chat-template-kwargs must be a JSON object");
  }
  // Unset, generate() takes 256 tokens or what the context leaves; set, the prompt must leave room for it.
  const maxTokens = values["max-tokens"] === undefined ? undefined : parseInteger("--max-tokens", values["max-tokens"], 256, 0);
  const sampling = {
    temperature: parseNumber("--temperature", values.temperature, 0.8),
    topP: parseNumber("--top-p", values["top-p"], 0.95),
    topK: parseInteger("--top-k", values["top-k"], 40, 0),
    minP: parseNumber("--min-p", values["min-p"], 0.05),
    repetitionPenalty: parseNumber("--repeat-penalty", values["repeat-penalty"], 1),
    frequencyPenalty: parseNumber("--frequency-penalty", values["frequency-penalty"], 0),
    presencePenalty: parseNumber("--presence-penalty", values["presence-penalty"], 0),
    seed: values.seed === undefined ? undefined : parseInteger("--seed", values.seed, 0, 0),
  };
  const threads = values.threads === undefined ? undefined : parseInteger("--threads", values.threads, 1, 1);

  const modelPath = context.localModelPath ? await context.localModelPath(values.model) : values.model;
  const bar = new ProgressBar("loading");
  const model = await loadModel(modelPath, {
    threads,
    backend: parseBackend(values.backend),
    simd: parseSimd(values.simd),
    contextSize: parseInteger("--context", values.context, 4096, 1),
    onProgress: ({ loadedBytes, totalBytes }) => bar.update(loadedBytes, totalBytes),
  });
  bar.finish();
  try {
    let input: EngineInput = { text: values.prompt };
    if (values.chat) {
      if (!model.chatTemplate) process.stderr.write(`loom: ${modelPath} has no chat template; --chat uses the default ChatML template\n`);
      const messages: ChatMessage[] = [];
      if (values.system !== undefined) messages.push({ role: "system", content: values.system });
      messages.push({ role: "user", content: values.prompt });
      input = { messages, templateKwargs };
    }
    // A model's own chat template writes its BOS; raw prompts and the default template get the usual special tokens.
    const prompt = preparePrompt({ tokenizer: model.tokenizer, chatTemplate: model.chatTemplate, vocabSize: model.config.vocab_size }, input, undefined);
    const events = generate(model, prompt.tokens, { maxTokens, sampling, stop: values.stop, endOfTurn: prompt.endOfTurn });
    let text = "";
    for await (const event of events) {
      if (event.type === "text") {
        text += event.text;
        if (!values.json) process.stdout.write(event.text);
      } else if (values.json) {
        process.stdout.write(`${JSON.stringify({
          text,
          tokens: event.tokens,
          prompt_tokens: event.promptTokens,
          completion_tokens: event.tokens.length,
          finish_reason: event.finishReason,
          stop_sequence: event.stopSequence ?? null,
          prefill_tokens_per_s: round(event.prefillTokensPerSecond),
          decode_tokens_per_s: round(event.decodeTokensPerSecond),
          load_seconds: round(model.loadSeconds),
          seed: event.seed,
        })}\n`);
      } else {
        process.stdout.write("\n");
      }
    }
  } finally {
    await model.dispose();
  }
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
