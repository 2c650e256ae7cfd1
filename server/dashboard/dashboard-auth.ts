// Who is calling a dashboard endpoint (README.md in this folder): an organization or the operator, by session cookie
// or bearer credential. The routes of every dashboard surface ask this one interface, so that the session rules
// (CSRF, cross-site refusal, kinds) live in one place.
import type { HttpRequest } from "uWebSockets.js";

/** An organization signed in with one of its management keys (by cookie or bearer). */
export interface OrganizationCaller {
  organizationId: string;
  /** The management key the session signed in with, or the bearer key. */
  keyId: string;
}

/** Resolves the caller of a dashboard request. */
export interface DashboardAuth {
  /**
   * The organization calling an `/api/v1/dashboard/` endpoint. `changesState`: the request is a POST, PATCH or DELETE
   * (a cookie session must then send its CSRF token and not be cross-site).
   * NOTE: reads `req` synchronously (call it from the handler before any await).
   * @returns a promise rejected with a ProtocolError (401 without a credential that counts, 403 cross-site or without
   *   the CSRF token, 502 when the database does not answer).
   */
  organization(req: HttpRequest, changesState: boolean): Promise<OrganizationCaller>;
  /** The operator calling an `/api/v1/operator/` endpoint; as `organization`. */
  operator(req: HttpRequest, changesState: boolean): Promise<void>;
}
