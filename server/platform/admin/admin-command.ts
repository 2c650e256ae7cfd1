// The operator's commands as plain data (what `loom admin` builds and what a running server accepts as JSON), and
// their validation: every field checked, unknown fields refused, each error naming its field.
import { type KeyKind, PlatformInputError } from "../contract.js";
import { type CorpusDocument, validateCorpusDocument } from "../store/corpus-store.js";
import type { PaymentStatus } from "../store/payment-ledger.js";
import { type KeyOptions, validateKeyOptions } from "../store/key-store.js";
import { type OrganizationPatch, validateOrganizationPatch } from "../store/organization-patch.js";
import { type NewUpdateEvent, UPDATE_ACTIONS, UPDATE_OUTCOMES, requirePackageSha256 } from "../store/update-ledger.js";
import { quote, refuseUnknownFields, requireChoice, requireDay, requireId, requireInteger, requireName, requireObject, requireStorableText } from "../store/validate.js";

/** One admin command. `command` says which; the other fields are its arguments. */
export type AdminCommand =
  | { command: "org.create"; name: string; fields?: OrganizationPatch }
  | { command: "org.list" }
  | { command: "org.show"; organizationId: string }
  | { command: "org.set"; organizationId: string; patch: OrganizationPatch }
  | { command: "key.create"; organizationId: string; kind: KeyKind; name: string; options?: KeyOptions }
  | { command: "key.list"; organizationId: string; kind?: KeyKind }
  | { command: "key.revoke"; organizationId: string; keyId: string }
  | { command: "usage"; organizationId: string; day?: string }
  | { command: "org.rotate-webhook-secret"; organizationId: string }
  | { command: "corpus.add"; documents: CorpusDocument[] }
  | { command: "corpus.list"; limit?: number; offset?: number }
  | { command: "corpus.remove"; url: string }
  | { command: "corpus.clear" }
  | { command: "payments.list"; limit?: number; status?: PaymentStatus }
  | { command: "operator-token.create"; name: string }
  | { command: "operator-token.list" }
  | { command: "operator-token.revoke"; tokenId: string }
  | { command: "update.approve"; version: string; packageSha256: string; approvedBy: string }
  | { command: "update.approvals" }
  | { command: "update.record"; event: NewUpdateEvent }
  | { command: "update.history"; limit?: number };

/** The names of the commands. */
export const ADMIN_COMMANDS = [
  "org.create", "org.list", "org.show", "org.set", "key.create", "key.list", "key.revoke", "usage", "org.rotate-webhook-secret", "corpus.add", "corpus.list", "corpus.remove", "corpus.clear", "payments.list",
  "operator-token.create", "operator-token.list", "operator-token.revoke", "update.approve", "update.approvals", "update.record", "update.history",
] as const;

/** The most documents one corpus.add takes (the CLI sends files in batches). */
export const MAX_CORPUS_DOCUMENTS_PER_COMMAND = 1000;

/** The fields each command takes besides `command`. */
const FIELDS: Record<AdminCommand["command"], readonly string[]> = {
  "org.create": ["name", "fields"],
  "org.list": [],
  "org.show": ["organizationId"],
  "org.set": ["organizationId", "patch"],
  "key.create": ["organizationId", "kind", "name", "options"],
  "key.list": ["organizationId", "kind"],
  "key.revoke": ["organizationId", "keyId"],
  usage: ["organizationId", "day"],
  "org.rotate-webhook-secret": ["organizationId"],
  "corpus.add": ["documents"],
  "corpus.list": ["limit", "offset"],
  "corpus.remove": ["url"],
  "corpus.clear": [],
  "payments.list": ["limit", "status"],
  "operator-token.create": ["name"],
  "operator-token.list": [],
  "operator-token.revoke": ["tokenId"],
  "update.approve": ["version", "packageSha256", "approvedBy"],
  "update.approvals": [],
  "update.record": ["event"],
  "update.history": ["limit"],
};

/**
 * Checks a command from anywhere (parsed JSON included) and returns it typed.
 * @throws PlatformInputError naming the first bad field (`command` for an unknown command).
 */
export function validateAdminCommand(input: unknown): AdminCommand {
  const raw = requireObject("command", input);
  const name = raw.command;
  if (typeof name !== "string" || !(ADMIN_COMMANDS as readonly string[]).includes(name)) {
    throw new PlatformInputError("command", `command must be one of ${ADMIN_COMMANDS.join(", ")}, got ${quote(name)}`);
  }
  const command = name as AdminCommand["command"];
  refuseUnknownFields(raw, ["command", ...FIELDS[command]]);
  switch (command) {
    case "org.create":
      return { command, name: requireName("name", raw.name), ...(raw.fields === undefined ? {} : { fields: validateOrganizationPatch(raw.fields, "fields") }) };
    case "org.list":
      return { command };
    case "org.show":
      return { command, organizationId: requireId("organizationId", raw.organizationId) };
    case "org.set":
      return { command, organizationId: requireId("organizationId", raw.organizationId), patch: validateOrganizationPatch(raw.patch) };
    case "key.create":
      return {
        command,
        organizationId: requireId("organizationId", raw.organizationId),
        kind: requireChoice("kind", raw.kind, ["inference", "management"] as const),
        name: requireName("name", raw.name),
        ...(raw.options === undefined ? {} : { options: validateKeyOptions(raw.options) }),
      };
    case "key.list":
      return {
        command,
        organizationId: requireId("organizationId", raw.organizationId),
        ...(raw.kind === undefined ? {} : { kind: requireChoice("kind", raw.kind, ["inference", "management"] as const) }),
      };
    case "key.revoke":
      return { command, organizationId: requireId("organizationId", raw.organizationId), keyId: requireId("keyId", raw.keyId) };
    case "usage":
      return { command, organizationId: requireId("organizationId", raw.organizationId), ...(raw.day === undefined ? {} : { day: requireDay("day", raw.day) }) };
    case "org.rotate-webhook-secret":
      return { command, organizationId: requireId("organizationId", raw.organizationId) };
    case "corpus.add": {
      const documents = raw.documents;
      if (!Array.isArray(documents) || documents.length === 0 || documents.length > MAX_CORPUS_DOCUMENTS_PER_COMMAND) {
        throw new PlatformInputError("documents", `documents must be an array of 1 to ${MAX_CORPUS_DOCUMENTS_PER_COMMAND} documents ({url, title, body}), got ${quote(documents)}`);
      }
      return { command, documents: documents.map((document, index) => validateCorpusDocument(document, `documents.${index}`)) };
    }
    case "corpus.list":
      return {
        command,
        ...(raw.limit === undefined ? {} : { limit: requireInteger("limit", raw.limit, 0) }),
        ...(raw.offset === undefined ? {} : { offset: requireInteger("offset", raw.offset, 0) }),
      };
    case "corpus.remove":
      if (typeof raw.url !== "string" || raw.url === "") throw new PlatformInputError("url", `url must be a document's URL, got ${quote(raw.url)}`);
      return { command, url: requireStorableText("url", raw.url) };
    case "corpus.clear":
      return { command };
    case "payments.list":
      return {
        command,
        ...(raw.limit === undefined ? {} : { limit: requireInteger("limit", raw.limit, 1) }),
        ...(raw.status === undefined ? {} : { status: requireChoice("status", raw.status, ["settling", "settled", "failed"] as const) }),
      };
    case "operator-token.create":
      return { command, name: requireName("name", raw.name) };
    case "operator-token.list":
      return { command };
    case "operator-token.revoke":
      return { command, tokenId: requireId("tokenId", raw.tokenId) };
    case "update.approve":
      return { command, version: requireName("version", raw.version), packageSha256: requirePackageSha256("packageSha256", raw.packageSha256), approvedBy: requireName("approvedBy", raw.approvedBy) };
    case "update.approvals":
      return { command };
    case "update.record":
      return { command, event: validateUpdateEvent(raw.event) };
    case "update.history":
      return { command, ...(raw.limit === undefined ? {} : { limit: requireInteger("limit", raw.limit, 1) }) };
  }
}

/** An audit record to append: every field checked. @throws PlatformInputError naming `event.<field>`. */
function validateUpdateEvent(input: unknown): NewUpdateEvent {
  const raw = requireObject("event", input);
  refuseUnknownFields(raw, ["action", "outcome", "fromVersion", "toVersion", "actor", "detail"], "event.");
  const version = (field: "fromVersion" | "toVersion"): string | null => (raw[field] === null ? null : requireName(`event.${field}`, raw[field]));
  if (typeof raw.detail !== "string") throw new PlatformInputError("event.detail", `event.detail must be a string, got ${quote(raw.detail)}`);
  return {
    action: requireChoice("event.action", raw.action, UPDATE_ACTIONS),
    outcome: requireChoice("event.outcome", raw.outcome, UPDATE_OUTCOMES),
    fromVersion: version("fromVersion"),
    toVersion: version("toVersion"),
    actor: requireName("event.actor", raw.actor),
    detail: requireStorableText("event.detail", raw.detail),
  };
}
