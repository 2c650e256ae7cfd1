// The dashboard's sign-in (README.md in this folder, "Session"): POST /api/v1/dashboard/session signs in with a
// management key or an operator token and sets the session cookie; GET reports the cookie's session and its CSRF
// token again (after a page reload); DELETE signs out.
import type { ServerContext } from "../http/context.js";
import type { Routes, Surface } from "../http/routes.js";
import { ProtocolError } from "../protocol/internal.js";
import type { Organization } from "../platform/contract.js";
import type { KeyAuthenticator } from "../platform/keys/key-authenticator.js";
import { read } from "../platform/route-helpers.js";
import { type DashboardSession, type DashboardSessionStore, csrfTokenOf } from "../platform/store/dashboard-session-store.js";
import type { OperatorTokenRecord } from "../platform/store/operator-token-store.js";
import { isDashboardApiPath } from "./api-headers.js";
import { clearedSessionCookies, crossSiteRefusal, sessionCookie } from "./cookies.js";
import { DashboardReply, answerDashboard, dashboardError, withDashboardBody } from "./dashboard-reply.js";
import { MAX_CREDENTIAL_LENGTH, credentialsOf } from "./request-credentials.js";
import { liveCookieSession } from "./session-auth.js";
import { type SignInLimit, admitSignIn, admitSignInCredential } from "./sign-in-limit.js";

/** How long a dashboard session lasts (README: 12 hours). */
export const SESSION_TTL_MS = 12 * 3600 * 1000;

/** A sign-in body is one credential: a kilobyte is plenty. */
const MAX_SIGN_IN_BODY_BYTES = 1024;

const SESSION_PATH = "/api/v1/dashboard/session";

/** What the session routes need. */
export interface SessionRouteDependencies {
  sessions: DashboardSessionStore;
  operatorTokens: { find(token: string): Promise<OperatorTokenRecord | undefined> };
  managementKeys: KeyAuthenticator;
  /** A fresh read of an organization (for its name). */
  organization(id: string): Promise<Organization | undefined>;
  signIn: SignInLimit;
}

/** The `Session` object of the README. */
type SessionJson = { kind: "organization"; organization: { id: string; name: string }; expiresAt: string } | { kind: "operator"; expiresAt: string };

/** The session routes, and the dashboard's error shape for its API paths. */
export function dashboardSessionSurface(dependencies: SessionRouteDependencies): (context: ServerContext) => Surface {
  return (context) => ({
    register(routes: Routes) {
      const shape = () => dashboardError;
      routes.add("POST", SESSION_PATH, shape, (connection, req) => {
        const credentials = credentialsOf(req);
        const secure = connection.client.https || credentials.https;
        const refusal = crossSiteRefusal(credentials.origin);
        if (refusal !== undefined) {
          // The body stays unread: the connection closes after the answer.
          return answerDashboard(context, SESSION_PATH, connection, async () => { throw new ProtocolError("permission", refusal); }, true);
        }
        // Counted as the request arrives, so that attempts with bodies that do not parse count too; then per credential.
        // The address is the client's as a trusted proxy reports it, else the peer's (client-address.ts).
        const address = connection.client.address;
        const admitted = admitSignIn(dependencies.signIn, address);
        admitted.catch(() => undefined); // answered below
        withDashboardBody(context, SESSION_PATH, connection, req, MAX_SIGN_IN_BODY_BYTES, async (body) => {
          await admitted;
          const credential = signInCredential(body);
          await admitSignInCredential(dependencies.signIn, address, credential.value);
          const { token, session } = credential.kind === "managementKey" ? await organizationSignIn(dependencies, credential.value) : await operatorSignIn(dependencies, credential.value);
          const cookie = sessionCookie(token, { secure, maxAgeSeconds: SESSION_TTL_MS / 1000 });
          return new DashboardReply({ session: await sessionJson(dependencies, session), csrfToken: csrfTokenOf(token) }, { "set-cookie": cookie });
        });
      });
      routes.add("GET", SESSION_PATH, shape, (connection, req) => {
        const credentials = credentialsOf(req);
        return answerDashboard(context, SESSION_PATH, connection, async () => {
          const session = await liveCookieSession(dependencies.sessions, credentials, false, "the session cookie (sign in with POST /api/v1/dashboard/session)");
          return { session: await sessionJson(dependencies, session), csrfToken: csrfTokenOf(credentials.sessionToken!) };
        });
      });
      routes.add("DELETE", SESSION_PATH, shape, (connection, req) => {
        const credentials = credentialsOf(req);
        const secure = connection.client.https || credentials.https;
        return answerDashboard(context, SESSION_PATH, connection, async () => {
          await liveCookieSession(dependencies.sessions, credentials, true, "the session cookie");
          // Every session the browser presents ends, under either cookie name (a plain one left live would sign it in
          // again over plain HTTP); the one that signed this request in last, so that a failure leaves it to retry with.
          const signedIn = credentials.sessionToken!;
          for (const token of [...credentials.presentedSessionTokens.filter((other) => other !== signedIn), signedIn]) {
            await read("the session could not be ended", () => dependencies.sessions.revoke(token));
          }
          return new DashboardReply({ signedOut: true }, clearedSessionCookies({ secure }));
        });
      });
    },
    errorShapeFor(url) {
      return isDashboardApiPath(url) ? dashboardError : undefined;
    },
  });
}

/** The one credential of a sign-in body. @throws ProtocolError 400 naming the field at fault. */
function signInCredential(body: unknown): { kind: "managementKey" | "operatorToken"; value: string } {
  const form = 'the body must be {"managementKey": "sk-mgmt-..."} or {"operatorToken": "lop_..."}';
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ProtocolError("invalid_request", form);
  const fields = Object.keys(body);
  const unknown = fields.find((field) => field !== "managementKey" && field !== "operatorToken");
  if (unknown !== undefined) throw new ProtocolError("invalid_request", `unknown field ${JSON.stringify(unknown.slice(0, 100))}: ${form}`, unknown.slice(0, 100));
  if (fields.length !== 1) throw new ProtocolError("invalid_request", `exactly one credential, please: ${form}`, fields.length === 0 ? "managementKey" : "operatorToken");
  const kind = fields[0] as "managementKey" | "operatorToken";
  const value = (body as Record<string, unknown>)[kind];
  if (typeof value !== "string" || value === "" || value.length > MAX_CREDENTIAL_LENGTH || /\s/.test(value)) {
    throw new ProtocolError("invalid_request", `${kind} must be a credential of 1 to ${MAX_CREDENTIAL_LENGTH} characters without spaces`, kind);
  }
  return { kind, value };
}

/** Signs an organization in with one of its management keys. @throws ProtocolError 401 or 502. */
async function organizationSignIn(dependencies: SessionRouteDependencies, key: string): Promise<{ token: string; session: DashboardSession }> {
  const principal = await dependencies.managementKeys.authenticate({ authorization: `Bearer ${key}` }, "openai");
  if (principal instanceof ProtocolError) {
    if (principal.kind === "authentication") throw new ProtocolError("authentication", "the management key is unknown, revoked, or not a management key (sk-mgmt-...)", "managementKey");
    throw principal;
  }
  const subject = { kind: "organization" as const, organizationId: principal.organizationId, keyId: principal.keyId };
  return read("the session could not be opened", () => dependencies.sessions.create(subject, SESSION_TTL_MS));
}

/** Signs the operator in with an operator token. @throws ProtocolError 401 or 502. */
async function operatorSignIn(dependencies: SessionRouteDependencies, token: string): Promise<{ token: string; session: DashboardSession }> {
  const record = await read("the operator token could not be checked", () => dependencies.operatorTokens.find(token));
  if (record === undefined) throw new ProtocolError("authentication", "the operator token is unknown or revoked (mint one with loom admin operator-token create)", "operatorToken");
  return read("the session could not be opened", () => dependencies.sessions.create({ kind: "operator", operatorTokenId: record.id }, SESSION_TTL_MS));
}

/** A session as the README's `Session`. @throws ProtocolError 401 when its organization is gone, 502. */
async function sessionJson(dependencies: SessionRouteDependencies, session: DashboardSession): Promise<SessionJson> {
  const expiresAt = session.expiresAt.toISOString();
  if (session.kind === "operator") return { kind: "operator", expiresAt };
  const organization = await read("the organization could not be read", () => dependencies.organization(session.organizationId));
  if (organization === undefined) throw new ProtocolError("authentication", "the session's organization no longer exists");
  return { kind: "organization", organization: { id: organization.id, name: organization.name }, expiresAt };
}
