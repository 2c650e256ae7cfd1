// What the sign-in page says when a credential is refused (401): by what the typed text looks like, since the server
// answers every refusal alike (it does not say whether a key exists). Only an inference key gets "use a management
// key"; an unknown or revoked management key is called that.

/** The prefixes of loom's credentials (server/platform/store/key-secret.ts, operator-token-store.ts). */
const INFERENCE_KEY_PREFIX = "sk-gw-";
const MANAGEMENT_KEY_PREFIX = "sk-mgmt-";
const OPERATOR_TOKEN_PREFIX = "lop_";

/** The message for a refused `credential` typed as the organization's management key or the operator's token. */
export function signInRefusal(kind: "organization" | "operator", credential: string): string {
  if (kind === "operator") {
    if (credential.startsWith(MANAGEMENT_KEY_PREFIX) || credential.startsWith(INFERENCE_KEY_PREFIX)) return "That is an organization's key, not an operator token: choose “An organization” to sign in with a management key.";
    return credential.startsWith(OPERATOR_TOKEN_PREFIX) ? "That operator token is unknown or revoked." : `That is not an operator token: they start with ${OPERATOR_TOKEN_PREFIX}.`;
  }
  if (credential.startsWith(INFERENCE_KEY_PREFIX)) return `That is an inference key (${INFERENCE_KEY_PREFIX}…), which calls the API: sign in with a management key (${MANAGEMENT_KEY_PREFIX}…).`;
  if (credential.startsWith(MANAGEMENT_KEY_PREFIX)) return "That management key is unknown or revoked.";
  return `That is not a management key: they start with ${MANAGEMENT_KEY_PREFIX}.`;
}
