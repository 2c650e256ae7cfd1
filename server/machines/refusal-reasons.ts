// Why a payment was refused, in words: each 402 says which check failed. The facilitator's reason codes (those of
// @x402/evm's exact scheme) are kept at the end of the message, so clients that match on them still can; the
// facilitator's free text is not (it goes to the log).

const REASONS: Record<string, string> = {
  invalid_exact_evm_signature: "wrong signature: the authorization is not signed by its payer for this token",
  invalid_exact_evm_failed_to_parse_signature: "wrong signature: it cannot be parsed",
  invalid_exact_evm_recipient_mismatch: "wrong recipient",
  invalid_exact_evm_payload_authorization_value_mismatch: "amount does not match the price",
  invalid_exact_evm_authorization_value: "amount too low",
  invalid_exact_evm_payload_authorization_valid_before: "authorization expired (or expires too soon to settle)",
  invalid_exact_evm_payload_authorization_valid_after: "authorization not yet valid",
  invalid_exact_evm_insufficient_balance: "payer without balance: the payer holds less than the price",
  invalid_exact_evm_nonce_already_used: "payment already used: its authorization nonce was used on chain",
  invalid_exact_evm_network_mismatch: "wrong chain",
  invalid_exact_evm_token_name_mismatch: "wrong asset: the token's EIP-712 name differs",
  invalid_exact_evm_token_version_mismatch: "wrong asset: the token's EIP-712 version differs",
  invalid_exact_evm_missing_eip712_domain: "wrong asset: no EIP-712 domain",
  invalid_exact_evm_eip3009_not_supported: "wrong asset: the token does not support EIP-3009",
  invalid_exact_evm_transaction_simulation_failed: "settlement would fail: the transfer reverts on chain",
  invalid_exact_evm_transaction_failed: "settlement failed: the transfer did not go through on chain",
  invalid_exact_evm_scheme: "wrong scheme: only \"exact\" is accepted",
  unsupported_scheme: "wrong scheme or chain: not supported by the facilitator",
  invalid_network: "wrong chain",
  invalid_payload: "malformed payment payload",
  invalid_x402_version: "unsupported x402 version",
};

/**
 * Settlement failures that mean the transfer was never sent: with the chain saying the authorization is unused, nothing
 * can land later. Any other failure (a send that timed out, a receipt that never came) may still be mined while the
 * authorization is valid, so the payment stays open until the chain or the clock decides.
 */
export const NEVER_SENT = new Set([
  "invalid_exact_evm_signature",
  "invalid_exact_evm_failed_to_parse_signature",
  "invalid_exact_evm_recipient_mismatch",
  "invalid_exact_evm_payload_authorization_value_mismatch",
  "invalid_exact_evm_authorization_value",
  "invalid_exact_evm_payload_authorization_valid_before",
  "invalid_exact_evm_payload_authorization_valid_after",
  "invalid_exact_evm_insufficient_balance",
  "invalid_exact_evm_network_mismatch",
  "invalid_exact_evm_token_name_mismatch",
  "invalid_exact_evm_token_version_mismatch",
  "invalid_exact_evm_missing_eip712_domain",
  "invalid_exact_evm_eip3009_not_supported",
  "invalid_exact_evm_transaction_simulation_failed",
  "invalid_exact_evm_scheme",
  "unsupported_scheme",
  "invalid_network",
  "invalid_payload",
  "invalid_x402_version",
]);

/** A facilitator's reason code: snake_case words, as the x402 packages and the facilitator API name them. */
const REASON_CODE = /^[a-z][a-z0-9_]{0,99}$/;

/** Whether `reason` is a reason code, rather than free text (a thrown error's message that a library passed on). */
export function isReasonCode(reason: string | undefined): reason is string {
  return reason !== undefined && REASON_CODE.test(reason);
}

/**
 * A refusal's message from a facilitator's reason code: loom's words for it, then the code. Only the code is taken
 * from the facilitator: its message, and a reason that is not a code, can quote the RPC endpoint (with the API key in
 * its URL) or the facilitator's own internals: payment-gate.ts logs those and never answers them.
 */
export function describeRefusal(reason: string | undefined): string {
  const code = isReasonCode(reason) ? reason : "unknown_reason";
  const known = REASONS[code];
  return known ? `${known} (${code})` : `payment refused (${code})`;
}
