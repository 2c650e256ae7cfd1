// Questions sent to another thread or process that each get one numbered reply: the engine thread's answers to a
// WorkerEngine, and an engine worker's answers to a gateway's link (server/cluster/worker-link.ts).
import { type SentError, receivedError } from "./messages.js";

/** A numbered reply: an answer, or an error in sendable form. */
export type CallReply = { call: number; answer: unknown } | { call: number; error: SentError };

/** The questions asked and not yet answered. */
export class PendingCalls {
  readonly #calls = new Map<number, { resolve: (answer: never) => void; reject: (error: Error) => void }>();
  #count = 0;

  /**
   * Numbers a new question and hands the number to `send`, which sends it; resolves with the reply's answer. If
   * `send` throws, the question is forgotten and the promise rejects with `refused(error)`.
   */
  ask<T>(send: (call: number) => void, refused: (error: Error) => Error = (error) => error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const call = ++this.#count;
      this.#calls.set(call, { resolve: resolve as (answer: never) => void, reject });
      try {
        send(call);
      } catch (error) {
        this.#calls.delete(call);
        reject(refused(error as Error));
      }
    });
  }

  /** Settles the question a reply answers (an error rebuilt as receivedError makes it); unknown numbers are ignored. */
  settle(reply: CallReply): void {
    const call = this.#calls.get(reply.call);
    this.#calls.delete(reply.call);
    if ("error" in reply) call?.reject(receivedError(reply.error));
    else call?.resolve(reply.answer as never);
  }

  /** Rejects every question still open with `error` (the other side is gone). */
  rejectAll(error: Error): void {
    for (const call of this.#calls.values()) call.reject(error);
    this.#calls.clear();
  }
}
