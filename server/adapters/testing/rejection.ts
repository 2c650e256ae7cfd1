// The ProtocolError a parser call throws, for the request parsers' tests. Plain code, no test-runner imports.
import { ProtocolError } from "../../protocol/internal.js";

/** The ProtocolError `call` throws; anything else it throws is rethrown, and returning is an error. */
export function rejection(call: () => unknown): ProtocolError {
  try {
    call();
  } catch (error) {
    if (error instanceof ProtocolError) return error;
    throw error;
  }
  throw new Error("expected a ProtocolError, but the call succeeded");
}
