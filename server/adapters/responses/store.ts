// What the Responses API keeps between requests, as the adapter sees it: stored responses with the conversation they
// were generated from, per owner, until they expire. The platform's database implements it
// (server/platform/store/response-store.ts); nothing here knows SQL.

/** A JSON object as stored and returned (a response object, an input item). */
export type JsonRecord = Record<string, unknown>;

/** One response to keep. */
export interface ResponseRecord {
  /** `resp_` and hex digits. */
  id: string;
  /** Whose it is: the organization's id, or `key:<key id>` where there is no platform. Nobody else can read it. */
  owner: string;
  createdAt: Date;
  /** After this, it is as if deleted (and the cleanup job removes it). */
  expiresAt: Date;
  /** The response object exactly as it was answered. */
  response: JsonRecord;
  /**
   * The items the response was generated from, in order: the earlier turns' (when it continued a stored response),
   * then its own input. Each has an `id`.
   */
  inputItems: JsonRecord[];
}

/** A page of a response's input items. */
export interface InputItemsPage {
  items: JsonRecord[];
  /** Whether more items follow in the requested order. */
  hasMore: boolean;
}

/** Stored responses. Every read and delete is scoped to an owner: another owner's id is as good as missing. */
export interface ResponseStore {
  /** Keeps a response (its id is new). */
  save(record: ResponseRecord): Promise<void>;
  /** The owner's unexpired response, or undefined. */
  get(owner: string, id: string): Promise<Pick<ResponseRecord, "id" | "response" | "inputItems"> | undefined>;
  /** Deletes the owner's response; false when there was none (or it had expired). */
  delete(owner: string, id: string): Promise<boolean>;
  /**
   * A page of the owner's response's input items, or undefined when the response is missing. `after` is an item id:
   * the page starts after it (in `order`); an unknown one gives an empty page.
   */
  inputItems(owner: string, id: string, page: { limit: number; order: "asc" | "desc"; after?: string }): Promise<InputItemsPage | undefined>;
  /** Removes expired responses, at most `limit` of them; returns how many went. */
  deleteExpired(now: Date, limit: number): Promise<number>;
}
