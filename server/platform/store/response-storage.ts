// Where the Responses API keeps stored responses: the platform's database when the platform is on, else the embedded
// database (PGlite) of the data dir, opened at the first request that needs it, so that a server that never stores a
// response never takes the data dir. Expired responses are removed by a background job either way.
import { DEFAULT_RESPONSE_RETENTION_MS, type ResponsesStorage } from "../../adapters/responses/endpoint.js";
import type { InputItemsPage, ResponseRecord, ResponseStore } from "../../adapters/responses/store.js";
import type { Database } from "../contract.js";
import { openDatabase } from "../db/open-database.js";
import { ResponseCleanup } from "./response-cleanup.js";
import { SqlResponseStore } from "./response-store.js";

/** Stored responses and their cleanup job. */
export interface OpenedResponseStorage {
  storage: ResponsesStorage;
  /** Stops the cleanup job, and closes the embedded database if it was opened here. */
  close(): Promise<void>;
}

/** Where to keep them: the platform's database, or a data dir of its own. */
export type ResponseStorageOptions = ({ database: Database } | { dataDir: string }) & {
  /** Days a stored response stays readable (default 30). */
  retentionDays?: number;
  /** The most JSON a continued conversation may carry (default 8 MiB). */
  maxConversationBytes?: number;
  /** Where the cleanup job reports failures. */
  onError?: (error: unknown) => void;
};

/** Opens stored-response storage and starts its cleanup job. */
export function openResponseStorage(options: ResponseStorageOptions): OpenedResponseStorage {
  const retentionMs = options.retentionDays === undefined ? DEFAULT_RESPONSE_RETENTION_MS : options.retentionDays * 24 * 3600 * 1000;
  const embedded = "dataDir" in options ? new EmbeddedResponseStore(options.dataDir) : undefined;
  const store: ResponseStore = embedded ?? new SqlResponseStore((options as { database: Database }).database);
  const cleanup = new ResponseCleanup(store, options.onError ? { onError: options.onError } : {});
  cleanup.start();
  return {
    storage: { store, retentionMs, ...(options.maxConversationBytes !== undefined ? { maxConversationBytes: options.maxConversationBytes } : {}) },
    async close() {
      await cleanup.stop();
      await embedded?.close();
    },
  };
}

/** A ResponseStore on PGlite in `dataDir`, opened at first use (and tried again after a failed open). */
class EmbeddedResponseStore implements ResponseStore {
  #opening: Promise<{ database: Database; store: SqlResponseStore }> | undefined;
  #closed = false;

  constructor(private readonly dataDir: string) {}

  save(record: ResponseRecord): Promise<void> {
    return this.#store().then((store) => store.save(record));
  }

  get(owner: string, id: string): Promise<Pick<ResponseRecord, "id" | "response" | "inputItems"> | undefined> {
    return this.#store().then((store) => store.get(owner, id));
  }

  delete(owner: string, id: string): Promise<boolean> {
    return this.#store().then((store) => store.delete(owner, id));
  }

  inputItems(owner: string, id: string, page: { limit: number; order: "asc" | "desc"; after?: string }): Promise<InputItemsPage | undefined> {
    return this.#store().then((store) => store.inputItems(owner, id, page));
  }

  /** Nothing to remove before the database is open: expired rows wait for the first run after it opens. */
  async deleteExpired(now: Date, limit: number): Promise<number> {
    if (!this.#opening) return 0;
    return (await this.#store()).deleteExpired(now, limit);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const opened = await this.#opening?.catch(() => undefined);
    await opened?.database.close();
  }

  async #store(): Promise<SqlResponseStore> {
    if (this.#closed) throw new Error("the server is shutting down");
    this.#opening ??= openDatabase({ dataDir: this.dataDir }).then(
      (database) => ({ database, store: new SqlResponseStore(database) }),
      (error: unknown) => {
        this.#opening = undefined;
        throw new Error(`the data dir ${this.dataDir} cannot be opened for stored responses (${(error as Error).message}); set LOOM_DATA_DIR to another folder, or send store: false`);
      },
    );
    return (await this.#opening).store;
  }
}
