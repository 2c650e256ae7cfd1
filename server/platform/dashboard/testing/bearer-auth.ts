// TEST ONLY: a stand-in DashboardAuth for the data endpoints' tests, written while the real one (sessions, cookies,
// CSRF, operator tokens) was being built beside it. It takes bearer credentials only: an organization's real
// management key (checked by the platform's KeyAuthenticator), or one fixed operator token. Never use it in a server.
import type { HttpRequest } from "uWebSockets.js";
import { ProtocolError } from "../../../protocol/internal.js";
import type { KeyAuthenticator } from "../../keys/key-authenticator.js";
import { authenticate } from "../../route-helpers.js";
import type { DashboardAuth, OrganizationCaller } from "../dashboard-auth.js";

/** The operator bearer the stand-in accepts. */
export const TEST_OPERATOR_TOKEN = "lop_test-operator-token-for-the-data-endpoints";

/** TEST ONLY: management keys for organizations, TEST_OPERATOR_TOKEN for the operator; bearer only, no cookies. */
export function testBearerAuth(managementKeys: KeyAuthenticator): DashboardAuth {
  return {
    organization(req: HttpRequest): Promise<OrganizationCaller> {
      return authenticate(managementKeys, req).then((principal) => ({ organizationId: principal.organizationId, keyId: principal.keyId }));
    },
    operator(req: HttpRequest): Promise<void> {
      const authorization = req.getHeader("authorization");
      return authorization === `Bearer ${TEST_OPERATOR_TOKEN}`
        ? Promise.resolve()
        : Promise.reject(new ProtocolError("authentication", "the operator's endpoints take the operator token"));
    },
  };
}
