// Migration 1: organizations, their keys (digests only), daily usage per key and model, and prepaid credit holds.
import { DEFAULT_ORGANIZATION_LIMITS } from "../../contract.js";
import type { Migration } from "./migration.js";

const limits = DEFAULT_ORGANIZATION_LIMITS;

export const migration0001: Migration = {
  version: 1,
  description: "organizations, api_keys, usage_daily, credit_holds",
  statements: [
    `CREATE TABLE organizations (
      id text PRIMARY KEY,
      -- Creation order: created_at can tie (one clock tick), and ids are random.
      created_order bigint GENERATED ALWAYS AS IDENTITY,
      name text NOT NULL CHECK (length(name) <= 255 AND length(btrim(name)) >= 1),
      billing_mode text CHECK (billing_mode IN ('subscription', 'prepaid')),
      plan_label text,
      plan_status text,
      plan_is_unlimited_comp boolean NOT NULL DEFAULT false,
      allowance_basis text CHECK (allowance_basis IN ('credit', 'tokens')),
      allowance_amount numeric(20, 9) CHECK (allowance_amount >= 0),
      allowance_hard_cap boolean NOT NULL DEFAULT false,
      credit_balance numeric(20, 9) NOT NULL DEFAULT 0,
      closed_beta boolean NOT NULL DEFAULT false,
      requests_per_minute bigint DEFAULT ${limits.requestsPerMinute} CHECK (requests_per_minute > 0),
      tokens_per_minute bigint DEFAULT ${limits.tokensPerMinute} CHECK (tokens_per_minute > 0),
      tokens_per_day bigint DEFAULT ${limits.tokensPerDay} CHECK (tokens_per_day > 0),
      prices jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(prices) = 'object'),
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((allowance_basis IS NULL) = (allowance_amount IS NULL))
    )`,
    `CREATE TABLE api_keys (
      id text PRIMARY KEY,
      created_order bigint GENERATED ALWAYS AS IDENTITY,
      organization_id text NOT NULL REFERENCES organizations (id),
      kind text NOT NULL CHECK (kind IN ('inference', 'management')),
      name text NOT NULL CHECK (length(name) <= 255 AND length(btrim(name)) >= 1),
      key_prefix text NOT NULL,
      key_digest text NOT NULL UNIQUE CHECK (key_digest ~ '^[0-9a-f]{64}$'),
      is_active boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz,
      requests_per_minute bigint CHECK (requests_per_minute > 0),
      tokens_per_minute bigint CHECK (tokens_per_minute > 0),
      tokens_per_day bigint CHECK (tokens_per_day > 0),
      allowed_models jsonb CHECK (allowed_models IS NULL OR jsonb_typeof(allowed_models) = 'array')
    )`,
    `CREATE INDEX api_keys_by_organization ON api_keys (organization_id, created_at)`,
    `CREATE TABLE usage_daily (
      organization_id text NOT NULL REFERENCES organizations (id),
      key_id text NOT NULL REFERENCES api_keys (id),
      model text NOT NULL,
      day date NOT NULL,
      requests bigint NOT NULL DEFAULT 0 CHECK (requests >= 0),
      input_tokens bigint NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
      cached_input_tokens bigint NOT NULL DEFAULT 0 CHECK (cached_input_tokens >= 0),
      output_tokens bigint NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
      spend numeric(20, 9) NOT NULL DEFAULT 0 CHECK (spend >= 0),
      PRIMARY KEY (organization_id, key_id, model, day)
    )`,
    `CREATE INDEX usage_daily_by_organization_day ON usage_daily (organization_id, day)`,
    `CREATE TABLE credit_holds (
      id text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations (id),
      amount numeric(20, 9) NOT NULL CHECK (amount > 0),
      expires_at timestamptz NOT NULL
    )`,
    `CREATE INDEX credit_holds_by_organization ON credit_holds (organization_id, expires_at)`,
  ],
};
