// Migration 5: the Responses API's stored responses (`store: true`), each with the input items it was generated from,
// per owner, until they expire (server/adapters/responses/store.ts; server/platform/store/response-store.ts).
import type { Migration } from "./migration.js";

export const migration0005: Migration = {
  version: 5,
  description: "responses",
  statements: [
    `CREATE TABLE responses (
      -- resp_ and random hex digits, unique by construction.
      id text PRIMARY KEY,
      -- An organization's id, or key:<key id> where there is no platform: no foreign key, since the latter names
      -- nothing in this database. Reads check it beside the primary key, so it needs no index of its own.
      owner text NOT NULL,
      created_at timestamptz NOT NULL,
      -- Past it the row is invisible to reads, and the cleanup job deletes it.
      expires_at timestamptz NOT NULL,
      -- The response object as it was answered.
      response jsonb NOT NULL CHECK (jsonb_typeof(response) = 'object'),
      -- The items the response was generated from, in order, each an object with an id; paged in SQL.
      input_items jsonb NOT NULL CHECK (jsonb_typeof(input_items) = 'array')
    )`,
    // The cleanup job's scan: the oldest expired rows first.
    `CREATE INDEX responses_expires_at ON responses (expires_at)`,
  ],
};
