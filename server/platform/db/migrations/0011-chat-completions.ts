// Migration 11: stored chat completions (`store: true` on POST /v1/chat/completions), each with the request's
// messages and its metadata, per owner, until they expire (server/adapters/openai/stored.ts;
// server/platform/store/chat-completion-store.ts).
import type { Migration } from "./migration.js";

export const migration0011: Migration = {
  version: 11,
  description: "chat_completions",
  // A new table only: a loom of schema 10 runs on this schema unchanged.
  keepsPrevious: true,
  statements: [
    `CREATE TABLE chat_completions (
      -- chatcmpl- and random hex digits, unique by construction: a second insert of one id fails, never overwrites.
      id text PRIMARY KEY,
      -- An organization's id, or key:<key id> where there is no platform, as in responses: no foreign key.
      owner text NOT NULL,
      -- The model slug it was answered under, for the list's model filter.
      model text NOT NULL,
      created_at timestamptz NOT NULL,
      -- Past it the row is invisible to reads, and the cleanup job deletes it.
      expires_at timestamptz NOT NULL,
      -- Up to 16 string pairs; the list filters with @>, and an update replaces them.
      metadata jsonb NOT NULL CHECK (jsonb_typeof(metadata) = 'object'),
      -- The chat.completion object as it was answered.
      completion jsonb NOT NULL CHECK (jsonb_typeof(completion) = 'object'),
      -- The request's messages, in order, each an object with an id; paged in SQL.
      messages jsonb NOT NULL CHECK (jsonb_typeof(messages) = 'array')
    )`,
    // The list: an owner's completions by creation time, then id (the order pages follow).
    `CREATE INDEX chat_completions_owner_created ON chat_completions (owner, created_at, id)`,
    // The cleanup job's scan: the oldest expired rows first.
    `CREATE INDEX chat_completions_expires_at ON chat_completions (expires_at)`,
  ],
};
