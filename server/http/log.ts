// Where the HTTP server reports what went wrong: one line per event on stderr by default, each with the request id
// the client got in its `x-request-id` header, so that a 500 a user reports can be found.

/** The server's error log. */
export interface ServerLog {
  /** A request failed on the server's side (a 500, or a stream cut by a server error). */
  requestError(requestId: string, route: string, error: unknown): void;
}

/** Writes one line per failure, then the stack, to stderr. */
export const stderrLog: ServerLog = {
  requestError(requestId, route, error) {
    const detail = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
    process.stderr.write(`loom: request ${requestId} (${route}) failed: ${detail}\n`);
  },
};
