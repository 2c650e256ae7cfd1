// What stored chat completions (`store: true`) keep, as the chat-completions adapter sees them: the completion as it
// was answered, the request's messages and its metadata, per owner, until they expire. The platform's database
// implements it (server/platform/store/chat-completion-store.ts); nothing here knows SQL.

/** A JSON object as stored and returned (a completion, a message). */
export type JsonRecord = Record<string, unknown>;

/** One completion to keep. */
export interface StoredCompletionRecord {
  /** `chatcmpl-` and hex digits: the completion's own id. */
  id: string;
  /** Whose it is: the organization's id, or `key:<key id>` where there is no platform (as stored responses). */
  owner: string;
  /** The model slug it was answered under (what `model` filters the list by). */
  model: string;
  createdAt: Date;
  /** After this, it is as if deleted (and the cleanup job removes it). */
  expiresAt: Date;
  /** Up to 16 string pairs (metadata.ts); what the list filters by and POST /v1/chat/completions/{id} replaces. */
  metadata: Record<string, string>;
  /** The `chat.completion` object exactly as it was answered (a stream's, assembled from its chunks). */
  completion: JsonRecord;
  /** The request's messages as sent, in order, each with an `id` (`<completion id>-<index>`). */
  messages: JsonRecord[];
}

/** A stored completion as reads return it. */
export type StoredCompletion = Pick<StoredCompletionRecord, "id" | "completion" | "metadata">;

/** A page of a list, in the requested order. */
export interface StoredPage<T> {
  items: T[];
  /** Whether more follow in the requested order. */
  hasMore: boolean;
}

/** How a list is paged: `after` is an id (the page starts past it); an unknown one gives an empty page. */
export interface PageRequest {
  limit: number;
  order: "asc" | "desc";
  after?: string;
}

/** What the list of completions is filtered by: the model slug and metadata pairs that must all match. */
export interface CompletionFilter {
  model?: string;
  metadata?: Record<string, string>;
}

/** Stored completions. Every read, update and delete is scoped to an owner: another owner's id is as good as missing. */
export interface ChatCompletionStore {
  /** Keeps a completion (its id is new: a second save of one id fails rather than overwrite it). */
  save(record: StoredCompletionRecord): Promise<void>;
  /** The owner's unexpired completion, or undefined. */
  get(owner: string, id: string): Promise<StoredCompletion | undefined>;
  /** A page of the owner's completions by creation time (then id), filtered. */
  list(owner: string, filter: CompletionFilter, page: PageRequest): Promise<StoredPage<StoredCompletion>>;
  /** Replaces the completion's metadata; undefined when it is missing. */
  updateMetadata(owner: string, id: string, metadata: Record<string, string>): Promise<StoredCompletion | undefined>;
  /** Deletes the owner's completion; false when there was none (or it had expired). */
  delete(owner: string, id: string): Promise<boolean>;
  /** A page of the completion's request messages, or undefined when the completion is missing. */
  messages(owner: string, id: string, page: PageRequest): Promise<StoredPage<JsonRecord> | undefined>;
  /** Removes expired completions, at most `limit` of them; returns how many went. */
  deleteExpired(now: Date, limit: number): Promise<number>;
}

/** Where completions are kept, and for how long. */
export interface ChatCompletionStorage {
  store: ChatCompletionStore;
  /** How long a stored completion stays readable (the stored responses' retention: default 30 days). */
  retentionMs: number;
}
