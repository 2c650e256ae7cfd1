// A WorkerEngine's prompt thread: renders, compacts and tokenizes requests' prompts with the model's tokenizer and chat
// template (not its weights), beside the engine thread, so that preparing a long conversation never holds up the
// engine's steps (a 4,096-message conversation takes tens to hundreds of milliseconds to render and compact).
// Started by PromptThread (engine/host/prompt-thread.ts) from dist/, the compiled form of this file.
import { parentPort, workerData } from "node:worker_threads";
import { prepareRequestPrompt } from "../prompt.js";
import { detokenizeWith, tokenizeWith } from "../tokenize.js";
import { PromptCounter, promptModelOf } from "../prompt-counter.js";
import { sendableError } from "./messages.js";
import type { PromptAnswer, PromptWorkerData, ToPromptWorker } from "./prompt-thread.js";

const port = parentPort;
if (!port) throw new Error("prompt-worker.js runs as a worker thread (started by PromptThread)");
const data = workerData as PromptWorkerData;
// Questions that arrive meanwhile wait in the port. A model whose tokenizer cannot be read here ends the thread, and
// its engine prepares prompts on its own thread instead.
const model = promptModelOf(PromptCounter.readSource(data.path, data.mmproj));
model.tokenizer.longestPieceBytes(); // the bound that stops tokenizing at the limit, built before the first prompt

port.on("message", (question: ToPromptWorker) => {
  try {
    let answer: PromptAnswer;
    if ("tokenize" in question) answer = tokenizeWith(model, question.tokenize, question.settings);
    else if ("detokenize" in question) answer = detokenizeWith(model, question.detokenize);
    else {
      const prompt = prepareRequestPrompt(model, question.request, question.settings);
      answer = question.countOnly ? prompt.tokens.length : prompt;
    }
    port.postMessage({ call: question.call, answer });
  } catch (error) {
    port.postMessage({ call: question.call, error: sendableError(error) });
  }
});
