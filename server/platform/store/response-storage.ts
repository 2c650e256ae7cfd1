// Where the Responses API keeps stored responses, and chat completions keep theirs (`store: true`): the platform's
// database when the platform is on, else the embedded database (PGlite) of the data dir, opened at the first request
// that needs it, so that a server that never stores anything never takes the data dir. Both share the retention, and
// expired rows are removed by a background job either way.
import { DEFAULT_RESPONSE_RETENTION_MS, type ResponsesStorage } from "../../adapters/responses/endpoint.js";
import type { InputItemsPage, ResponseRecord, ResponseStore } from "../../adapters/responses/store.js";
import type { ChatCompletionStorage, ChatCompletionStore } from "../../adapters/openai/stored.js";
import type { Database } from "../contract.js";
import { BatchCleanup } from "./batch-cleanup.js";
import { SqlChatCompletionStore } from "./chat-completion-store.js";
import { EmbeddedDatabase } from "./embedded-database.js";
import { ResponseCleanup } from "./response-cleanup.js";
import { SqlResponseStore } from "./response-store.js";

/** Stored responses and completions, and their cleanup jobs. */
export interface OpenedResponseStorage {
  storage: ResponsesStorage;
  /** Stored chat completions, in the same database with the same retention. */
  chatCompletions: ChatCompletionStorage;
  /** Stops the cleanup job, and closes the embedded database if it was opened here. */
  close(): Promise<void>;
}

/** Where to keep them: the platform's database, or a data dir of its own. */
export type ResponseStorageOptions = ({ database: Database } | { dataDir: string }) & {
  /** Days a stored response or completion stays readable (default 30). */
  retentionDays?: number;
  /** The most JSON a continued conversation may carry (default 8 MiB). */
  maxConversationBytes?: number;
  /** Where the cleanup job reports failures. */
  onError?: (error: unknown) => void;
};

/** Opens stored-response and stored-completion storage and starts their cleanup jobs. */
export function openResponseStorage(options: ResponseStorageOptions): OpenedResponseStorage {
  const retentionMs = options.retentionDays === undefined ? DEFAULT_RESPONSE_RETENTION_MS : options.retentionDays * 24 * 3600 * 1000;
  const embedded = "dataDir" in options ? new EmbeddedDatabase(options.dataDir) : undefined;
  const database = embedded ? undefined : (options as { database: Database }).database;
  const store: ResponseStore = database ? new SqlResponseStore(database) : new EmbeddedResponseStore(embedded!);
  const completions: ChatCompletionStore = database ? new SqlChatCompletionStore(database) : embeddedChatCompletionStore(embedded!);
  const cleanupOptions = options.onError ? { onError: options.onError } : {};
  const cleanups = [new ResponseCleanup(store, cleanupOptions), new BatchCleanup("expired chat completions", (now, limit) => completions.deleteExpired(now, limit), cleanupOptions)];
  for (const cleanup of cleanups) cleanup.start();
  return {
    storage: { store, retentionMs, ...(options.maxConversationBytes !== undefined ? { maxConversationBytes: options.maxConversationBytes } : {}) },
    chatCompletions: { store: completions, retentionMs },
    async close() {
      await Promise.all(cleanups.map((cleanup) => cleanup.stop()));
      await embedded?.close();
    },
  };
}

/** A ResponseStore on the embedded database, opened at first use. */
class EmbeddedResponseStore implements ResponseStore {
  #store: SqlResponseStore | undefined;

  constructor(private readonly embedded: EmbeddedDatabase) {}

  save(record: ResponseRecord): Promise<void> {
    return this.#opened().then((store) => store.save(record));
  }

  get(owner: string, id: string): Promise<Pick<ResponseRecord, "id" | "response" | "inputItems"> | undefined> {
    return this.#opened().then((store) => store.get(owner, id));
  }

  delete(owner: string, id: string): Promise<boolean> {
    return this.#opened().then((store) => store.delete(owner, id));
  }

  inputItems(owner: string, id: string, page: { limit: number; order: "asc" | "desc"; after?: string }): Promise<InputItemsPage | undefined> {
    return this.#opened().then((store) => store.inputItems(owner, id, page));
  }

  /** Nothing to remove before the database is open: expired rows wait for the first run after it opens. */
  async deleteExpired(now: Date, limit: number): Promise<number> {
    if (!this.embedded.opened) return 0;
    return (await this.#opened()).deleteExpired(now, limit);
  }

  async #opened(): Promise<SqlResponseStore> {
    const database = await this.embedded.database();
    return (this.#store ??= new SqlResponseStore(database));
  }
}

/** A ChatCompletionStore on the embedded database: each call opens it first if it is not yet open. */
function embeddedChatCompletionStore(embedded: EmbeddedDatabase): ChatCompletionStore {
  let opened: SqlChatCompletionStore | undefined;
  const store = async () => (opened ??= new SqlChatCompletionStore(await embedded.database()));
  return {
    save: async (record) => (await store()).save(record),
    get: async (owner, id) => (await store()).get(owner, id),
    list: async (owner, filter, page) => (await store()).list(owner, filter, page),
    updateMetadata: async (owner, id, metadata) => (await store()).updateMetadata(owner, id, metadata),
    delete: async (owner, id) => (await store()).delete(owner, id),
    messages: async (owner, id, page) => (await store()).messages(owner, id, page),
    // Nothing to remove before the database is open.
    deleteExpired: async (now, limit) => (embedded.opened ? (await store()).deleteExpired(now, limit) : 0),
  };
}
