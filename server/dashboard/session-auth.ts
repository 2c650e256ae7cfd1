// The DashboardAuth every dashboard route asks (dashboard-auth.ts): a bearer credential (a management key for an
// organization, an operator token for the operator) or else the session cookie, whose state-changing requests must
// carry the session's CSRF token and come from the dashboard's own origin.
import type { HttpRequest } from "uWebSockets.js";
import { ProtocolError } from "../protocol/internal.js";
import type { KeyAuthenticator } from "../platform/keys/key-authenticator.js";
import { read } from "../platform/route-helpers.js";
import type { DashboardSession, DashboardSessionStore } from "../platform/store/dashboard-session-store.js";
import { KEY_PREFIXES } from "../platform/store/key-secret.js";
import { OPERATOR_TOKEN_PREFIX, type OperatorTokenRecord } from "../platform/store/operator-token-store.js";
import { crossSiteRefusal } from "./cookies.js";
import type { DashboardAuth, OrganizationCaller } from "./dashboard-auth.js";
import { type DashboardCredentials, credentialsOf } from "./request-credentials.js";

/** What the dashboard's callers are checked against. */
export interface DashboardAuthDependencies {
  sessions: DashboardSessionStore;
  /** Looks up a live operator token (records its use). */
  operatorTokens: { find(token: string): Promise<OperatorTokenRecord | undefined> };
  /** The platform's management keys (cached briefly: a revoked key stops within its cache time). */
  managementKeys: KeyAuthenticator;
}

const ORGANIZATION_CREDENTIALS = "an organization's session cookie or Authorization: Bearer <management key>";
const OPERATOR_CREDENTIALS = "an operator session cookie or Authorization: Bearer <operator token>";

/** The DashboardAuth over the session store, the operator tokens and the management keys. */
export function createDashboardAuth(dependencies: DashboardAuthDependencies): DashboardAuth {
  return {
    organization(req: HttpRequest, changesState: boolean): Promise<OrganizationCaller> {
      const credentials = credentialsOf(req);
      return organizationCaller(dependencies, credentials, changesState);
    },
    operator(req: HttpRequest, changesState: boolean): Promise<void> {
      const credentials = credentialsOf(req);
      return operatorCaller(dependencies, credentials, changesState);
    },
  };
}

/** The organization behind `credentials`. @throws ProtocolError 401, 403 or 502. */
export async function organizationCaller(dependencies: DashboardAuthDependencies, credentials: DashboardCredentials, changesState: boolean): Promise<OrganizationCaller> {
  if (credentials.malformedAuthorization) throw new ProtocolError("authentication", `the Authorization header must be Bearer <management key>; this endpoint takes ${ORGANIZATION_CREDENTIALS}`);
  if (credentials.bearer !== undefined) {
    if (credentials.bearer.startsWith(OPERATOR_TOKEN_PREFIX)) {
      throw new ProtocolError("authentication", `an operator token counts on /api/v1/operator/ only; this endpoint takes ${ORGANIZATION_CREDENTIALS}`);
    }
    const principal = await dependencies.managementKeys.authenticate({ authorization: `Bearer ${credentials.bearer}` }, "openai");
    if (principal instanceof ProtocolError) throw principal;
    return { organizationId: principal.organizationId, keyId: principal.keyId };
  }
  const session = await liveCookieSession(dependencies.sessions, credentials, changesState, ORGANIZATION_CREDENTIALS);
  if (session.kind !== "organization") throw new ProtocolError("authentication", `this is the operator's session; this endpoint takes ${ORGANIZATION_CREDENTIALS}`);
  return { organizationId: session.organizationId, keyId: session.keyId };
}

/** Checks that `credentials` are the operator's. @throws ProtocolError 401, 403 or 502. */
export async function operatorCaller(dependencies: DashboardAuthDependencies, credentials: DashboardCredentials, changesState: boolean): Promise<void> {
  if (credentials.malformedAuthorization) throw new ProtocolError("authentication", `the Authorization header must be Bearer <operator token>; this endpoint takes ${OPERATOR_CREDENTIALS}`);
  if (credentials.bearer !== undefined) {
    if (credentials.bearer.startsWith(KEY_PREFIXES.management) || credentials.bearer.startsWith(KEY_PREFIXES.inference)) {
      throw new ProtocolError("authentication", `an organization's key counts on /api/v1/dashboard/ only; this endpoint takes ${OPERATOR_CREDENTIALS}`);
    }
    const token = await read("the operator token could not be checked", () => dependencies.operatorTokens.find(credentials.bearer!));
    if (token === undefined) throw new ProtocolError("authentication", "invalid operator token (unknown or revoked)");
    return;
  }
  const session = await liveCookieSession(dependencies.sessions, credentials, changesState, OPERATOR_CREDENTIALS);
  if (session.kind !== "operator") throw new ProtocolError("authentication", `this is an organization's session; this endpoint takes ${OPERATOR_CREDENTIALS}`);
}

/**
 * The live session of the request's cookie. A state-changing request must not be cross-site and must carry the
 * session's CSRF token (checked by the store against the digest it keeps).
 * @param wanted what the endpoint takes, for the 401's message.
 * @throws ProtocolError 401 (no cookie, or no live session), 403 (cross-site, no or a wrong CSRF token), 502.
 */
export async function liveCookieSession(sessions: DashboardSessionStore, credentials: DashboardCredentials, changesState: boolean, wanted: string): Promise<DashboardSession> {
  const token = credentials.sessionToken;
  if (token === undefined) throw new ProtocolError("authentication", `sign in first: this endpoint takes ${wanted}`);
  const check = "the session could not be checked";
  if (!changesState) {
    const session = await read(check, () => sessions.find(token));
    if (session === undefined) throw endedSession(wanted);
    return session;
  }
  const refusal = crossSiteRefusal(credentials.origin);
  if (refusal !== undefined) throw new ProtocolError("permission", refusal);
  if (credentials.csrfToken === "") throw new ProtocolError("permission", "a change by session cookie needs the session's CSRF token in the X-CSRF-Token header (GET /api/v1/dashboard/session gives it)");
  const session = await read(check, () => sessions.find(token, credentials.csrfToken));
  if (session !== undefined) return session;
  // Refused: say whether the token or the session was at fault (a second read, on this failure path only).
  if ((await read(check, () => sessions.find(token))) !== undefined) throw new ProtocolError("permission", "the X-CSRF-Token header is not this session's CSRF token");
  throw endedSession(wanted);
}

function endedSession(wanted: string): ProtocolError {
  return new ProtocolError("authentication", `the session has ended (expired, signed out, or its credential revoked): sign in again; this endpoint takes ${wanted}`);
}
