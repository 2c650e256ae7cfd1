// Migration 4: dedicated pools (issue 19): an organization may own a pool of engine workers (`loom worker --pool`);
// gateways send its requests only there, and no other organization's requests there.
import type { Migration } from "./migration.js";

export const migration0004: Migration = {
  version: 4,
  description: "organizations.pool",
  statements: [
    // NULL: the shared pool ("default"), which cannot be anyone's.
    `ALTER TABLE organizations ADD COLUMN pool text CHECK (pool ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$' AND pool <> 'default')`,
  ],
};
