// Migration 3: machine payments (issue 17): the journal of x402 payments, one row per EIP-3009 authorization, written
// before settlement so that a crash at any point leaves a row that says what to finish; and the service-wide settings
// (the webhook secret that signs callbacks of runs without an organization).
import type { Migration } from "./migration.js";

export const migration0003: Migration = {
  version: 3,
  description: "payments, service_settings",
  statements: [
    `CREATE TABLE payments (
      id text PRIMARY KEY,
      -- Which machine endpoint was paid for; the run it buys has this kind.
      kind text NOT NULL CHECK (kind IN ('machine_search', 'machine_run')),
      x402_version integer NOT NULL CHECK (x402_version IN (1, 2)),
      -- CAIP-2 (eip155:8453), whatever the client's protocol version called it.
      network text NOT NULL,
      -- Addresses and the nonce in lower case, so that one authorization has one spelling.
      asset text NOT NULL CHECK (asset ~ '^0x[0-9a-f]{40}$'),
      pay_to text NOT NULL CHECK (pay_to ~ '^0x[0-9a-f]{40}$'),
      payer text NOT NULL CHECK (payer ~ '^0x[0-9a-f]{40}$'),
      nonce text NOT NULL CHECK (nonce ~ '^0x[0-9a-f]{64}$'),
      -- In the asset's smallest unit (USDC: millionths of a dollar).
      amount numeric(78, 0) NOT NULL CHECK (amount > 0),
      -- The authorization's validBefore (unix seconds): past it, an unsettled authorization can never settle.
      valid_before bigint NOT NULL,
      -- The client's payment-identifier extension (idempotent retries), when it sent one.
      payment_identifier text UNIQUE,
      -- sha256 of the decoded payment header: "the same payment" for a retry under the same identifier.
      payload_digest text NOT NULL,
      payload jsonb NOT NULL CHECK (jsonb_typeof(payload) = 'object'),
      requirements jsonb NOT NULL CHECK (jsonb_typeof(requirements) = 'object'),
      -- Chosen when the payment is recorded; the run is created under this id in the transaction that records the
      -- settlement, from this request.
      run_id text NOT NULL UNIQUE,
      run_request jsonb NOT NULL CHECK (jsonb_typeof(run_request) = 'object'),
      -- settling: recorded, settlement under way or its outcome unknown (a crash); settled: charged, run created;
      -- failed: not charged (the authorization was never used on chain).
      status text NOT NULL CHECK (status IN ('settling', 'settled', 'failed')),
      -- Who is settling it until when; past it, the reconciler finishes the payment from the chain's state.
      lease_expires_at timestamptz,
      transaction text CHECK (transaction IS NULL OR transaction ~ '^0x[0-9a-f]{64}$'),
      error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      settled_at timestamptz,
      -- One authorization is used at most once, whatever the process that sees it.
      UNIQUE (network, asset, payer, nonce),
      CHECK ((status = 'settling') = (lease_expires_at IS NOT NULL)),
      CHECK ((status = 'settled') = (settled_at IS NOT NULL))
    )`,
    `CREATE INDEX payments_settling ON payments (lease_expires_at) WHERE status = 'settling'`,
    `CREATE INDEX payments_by_time ON payments (created_at)`,
    `CREATE TABLE service_settings (
      name text PRIMARY KEY,
      value text NOT NULL
    )`,
  ],
};
