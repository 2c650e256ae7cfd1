// The organization's plan, allowance, limits and prices (read-only: the operator changes them).
import { api } from "../api";
import { ErrorMessage, Loading, useLoad, useReady, useTitle } from "../components";
import { OrganizationFacts, PricesTable } from "./organization-facts";
import type { Organization } from "../types";

export function PlanPage() {
  useTitle("Plan and limits");
  const organization = useLoad((signal) => api<{ organization: Organization }>("GET", "/api/v1/dashboard/organization", undefined, { signal }).then((answer) => answer.organization), []);
  useReady(!organization.loading);
  const data = organization.data;
  return (
    <>
      <h1>Plan and limits</h1>
      {organization.error && <ErrorMessage>{organization.error}</ErrorMessage>}
      {!data && organization.loading && <Loading what="Loading the plan" />}
      {data && (
        <>
          <section class="card" aria-labelledby="plan-heading">
            <h2 id="plan-heading">{data.name}</h2>
            <OrganizationFacts organization={data} />
            <p class="muted">
              Organization id <code>{data.id}</code>. The operator changes these settings.
            </p>
          </section>
          <section class="card" aria-labelledby="prices-heading">
            <h2 id="prices-heading">Prices</h2>
            <PricesTable prices={data.prices} />
          </section>
        </>
      )}
    </>
  );
}
