// The stores of one database, together: what the admin commands and the HTTP routes are given.
import type { Database } from "../contract.js";
import { CorpusStore } from "./corpus-store.js";
import { CreditStore } from "./credit-store.js";
import { KeyStore } from "./key-store.js";
import { OperatorTokenStore } from "./operator-token-store.js";
import { OrganizationStore } from "./organization-store.js";
import { PaymentLedger } from "./payment-ledger.js";
import { UpdateLedger } from "./update-ledger.js";
import { UsageStore } from "./usage-store.js";
import { WebhookSecretStore } from "./webhook-secret-store.js";

/** Organizations, keys, usage, credits, webhook secrets, the search corpus, payments, operator tokens and update records over one database. */
export interface PlatformStores {
  organizations: OrganizationStore;
  keys: KeyStore;
  usage: UsageStore;
  credits: CreditStore;
  webhookSecrets: WebhookSecretStore;
  corpus: CorpusStore;
  /** The machine endpoints' payments, read (server/machines writes them). */
  payments: PaymentLedger;
  /** The operator's dashboard credentials. */
  operatorTokens: OperatorTokenStore;
  /** Software updates' approvals and audit records (loom update). */
  updates: UpdateLedger;
}

/** The stores over `database` (they hold no state of their own: create them once and share them). */
export function createPlatformStores(database: Database): PlatformStores {
  return {
    organizations: new OrganizationStore(database),
    keys: new KeyStore(database),
    usage: new UsageStore(database),
    credits: new CreditStore(database),
    webhookSecrets: new WebhookSecretStore(database),
    corpus: new CorpusStore(database),
    payments: new PaymentLedger(database),
    operatorTokens: new OperatorTokenStore(database),
    updates: new UpdateLedger(database),
  };
}
