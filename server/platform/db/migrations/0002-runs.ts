// Migration 2: agent runs (issue 16): the durable run queue and each run's step log, the local search corpus, signed
// callback deliveries with their attempts, and each organization's webhook signing secret.
import type { Migration } from "./migration.js";

export const migration0002: Migration = {
  version: 2,
  description: "runs, run_steps, search_documents, run_callbacks, callback_attempts, organizations.webhook_secret",
  statements: [
    // Standard Webhooks secret (`whsec_` + base64), made when first needed (server/runs/callbacks).
    `ALTER TABLE organizations ADD COLUMN webhook_secret text CHECK (webhook_secret IS NULL OR webhook_secret ~ '^whsec_[A-Za-z0-9+/=]{32,}$')`,
    `CREATE TABLE runs (
      id text PRIMARY KEY,
      -- Queue order (created_at can tie, ids are random).
      created_order bigint GENERATED ALWAYS AS IDENTITY,
      -- legacy: POST /v1/runs with a key; machine_search / machine_run: paid over x402 (issue 17), no organization.
      kind text NOT NULL CHECK (kind IN ('legacy', 'machine_search', 'machine_run')),
      organization_id text REFERENCES organizations (id),
      key_id text REFERENCES api_keys (id),
      engine text NOT NULL,
      -- The validated create body, as the worker runs it.
      request jsonb NOT NULL CHECK (jsonb_typeof(request) = 'object'),
      status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'processing', 'succeeded', 'failed')),
      -- Times a worker took the run (a second take follows a worker that died holding it).
      attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      lease_owner text,
      lease_expires_at timestamptz,
      cancel_requested boolean NOT NULL DEFAULT false,
      result jsonb,
      error jsonb,
      input_tokens bigint NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
      output_tokens bigint NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
      duration_ms bigint CHECK (duration_ms >= 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      finished_at timestamptz,
      CHECK ((status = 'succeeded') = (result IS NOT NULL)),
      CHECK ((status = 'failed') = (error IS NOT NULL)),
      CHECK ((status = 'processing') = (lease_expires_at IS NOT NULL)),
      CHECK (kind <> 'legacy' OR organization_id IS NOT NULL)
    )`,
    `CREATE INDEX runs_queued ON runs (created_order) WHERE status = 'queued'`,
    `CREATE INDEX runs_leased ON runs (lease_expires_at) WHERE status = 'processing'`,
    `CREATE INDEX runs_by_organization ON runs (organization_id, created_order)`,
    `CREATE TABLE run_steps (
      run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
      index integer NOT NULL CHECK (index >= 0),
      -- The take of the run that wrote it (runs.attempts at the time).
      attempt integer NOT NULL CHECK (attempt >= 1),
      kind text NOT NULL CHECK (kind IN ('model', 'tool', 'note')),
      -- A tool step is written 'started' before the tool runs, so a take after a lost worker knows what ran.
      status text NOT NULL CHECK (status IN ('started', 'finished', 'failed')),
      detail jsonb NOT NULL CHECK (jsonb_typeof(detail) = 'object'),
      input_tokens bigint NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
      output_tokens bigint NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
      started_at timestamptz NOT NULL DEFAULT now(),
      duration_ms bigint CHECK (duration_ms >= 0),
      PRIMARY KEY (run_id, index)
    )`,
    `CREATE TABLE search_documents (
      id text PRIMARY KEY,
      created_order bigint GENERATED ALWAYS AS IDENTITY,
      url text NOT NULL UNIQUE,
      title text NOT NULL,
      body text NOT NULL,
      search tsvector GENERATED ALWAYS AS (setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', body), 'B')) STORED,
      added_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE INDEX search_documents_search ON search_documents USING gin (search)`,
    `CREATE TABLE run_callbacks (
      run_id text PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
      url text NOT NULL,
      -- The signed body, fixed when the run ended: every attempt sends the same bytes under the same webhook-id.
      payload text NOT NULL,
      webhook_id text NOT NULL,
      attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      lease_expires_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      delivered_at timestamptz,
      gave_up_at timestamptz
    )`,
    `CREATE INDEX run_callbacks_due ON run_callbacks (next_attempt_at) WHERE delivered_at IS NULL AND gave_up_at IS NULL`,
    `CREATE TABLE callback_attempts (
      run_id text NOT NULL REFERENCES run_callbacks (run_id) ON DELETE CASCADE,
      attempt integer NOT NULL CHECK (attempt >= 1),
      at timestamptz NOT NULL DEFAULT now(),
      status_code integer,
      error text,
      duration_ms bigint NOT NULL CHECK (duration_ms >= 0),
      PRIMARY KEY (run_id, attempt)
    )`,
  ],
};
