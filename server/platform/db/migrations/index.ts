// Every migration this loom knows, in version order: the schema it understands is the last one's version.
import { migration0001 } from "./0001-initial.js";
import { migration0002 } from "./0002-runs.js";
import { migration0003 } from "./0003-payments.js";
import { migration0004 } from "./0004-pools.js";
import { migration0005 } from "./0005-responses.js";
import { migration0006 } from "./0006-dashboard-sessions.js";
import { migration0007 } from "./0007-operator-tokens.js";
import { migration0008 } from "./0008-dashboard-indexes.js";
import { migration0009 } from "./0009-usage-by-organization.js";
import { migration0010 } from "./0010-updates.js";
import { migration0011 } from "./0011-chat-completions.js";
import type { Migration } from "./migration.js";

export type { Migration } from "./migration.js";

/** The migrations, versions 1, 2, ... without gaps. */
export const MIGRATIONS: readonly Migration[] = [migration0001, migration0002, migration0003, migration0004, migration0005, migration0006, migration0007, migration0008, migration0009, migration0010, migration0011];

/** The newest schema version this code understands. */
export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
