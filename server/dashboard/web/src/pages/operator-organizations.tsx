// The operator's organizations, oldest first, with a search (part of a name, or an id), paging and create.
import { useState } from "preact/hooks";
import { ApiError, api, errorText, isAbort } from "../api";
import { ErrorMessage, Field, LoadMore, Loading, TableScroll, useAnnounce, useReady, useTitle } from "../components";
import { inFormTerms } from "../field-labels";
import { usePagedList } from "../paged-list";
import { formatDollars, formatInteger, formatTime } from "../format";
import { href, navigate } from "../router";
import type { Organization } from "../types";

export function OrganizationsPage() {
  useTitle("Organizations");
  /** The search the list shows (the field's text once submitted). */
  const [search, setSearch] = useState("");
  const list = usePagedList<Organization>("/api/v1/operator/organizations", "organizations", { search: search || undefined });
  useReady(list.loaded);
  const { items: organizations, cursor, loading, loaded, error } = list;

  return (
    <>
      <h1>Organizations</h1>
      <CreateOrganization />
      <section aria-labelledby="organizations-heading">
        <div class="section-head">
          <h2 id="organizations-heading">{search ? "Matching organizations" : "All organizations"}</h2>
          <SearchForm search={search} onSearch={setSearch} />
        </div>
        {error && <ErrorMessage>{error}</ErrorMessage>}
        {!loaded ? (
          <Loading what="Loading organizations" />
        ) : organizations.length === 0 && !error ? (
          <p class="empty" data-testid="organizations-empty">
            {search ? `No organization's name contains "${search}", and none has that id.` : "No organizations yet."}
          </p>
        ) : (
          <TableScroll label="Organizations">
            <table class="table" data-testid="organizations-table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Plan</th>
                  <th scope="col">Billing</th>
                  <th scope="col">Daily allowance</th>
                  <th scope="col" class="num">Credit balance</th>
                  <th scope="col">Closed beta</th>
                  <th scope="col">Pool</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {organizations.map((organization) => (
                  <tr key={organization.id} data-testid="organization-row" data-organization-id={organization.id}>
                    <th scope="row">
                      <a href={href(`/operator/organizations/${encodeURIComponent(organization.id)}`)} data-testid="organization-link">
                        {organization.name}
                      </a>
                    </th>
                    <td data-label="Plan">{[organization.plan.label, organization.plan.status].filter(Boolean).join(" · ") || "—"}</td>
                    <td data-label="Billing">{organization.billingMode ?? "—"}</td>
                    <td data-label="Daily allowance">
                      {organization.dailyAllowance
                        ? organization.dailyAllowance.basis === "tokens"
                          ? `${formatInteger(organization.dailyAllowance.amount)} tokens`
                          : formatDollars(organization.dailyAllowance.amount)
                        : "—"}
                    </td>
                    <td class="num" data-label="Credit balance">{formatDollars(organization.creditBalanceDollars)}</td>
                    <td data-label="Closed beta">{organization.closedBeta ? "Yes" : "No"}</td>
                    <td data-label="Pool">{organization.pool ?? "shared"}</td>
                    <td class="nowrap" data-label="Created">{formatTime(organization.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
        <LoadMore cursor={cursor} loading={loading} onMore={list.loadMore} />
      </section>
    </>
  );
}

/** Searches by part of a name (any case) or an id; empty shows every organization. */
function SearchForm({ search, onSearch }: { search: string; onSearch: (search: string) => void }) {
  const [text, setText] = useState(search);
  const submit = (event: Event) => {
    event.preventDefault();
    onSearch(text.trim());
  };
  return (
    <form class="search" role="search" onSubmit={submit} data-testid="organizations-search-form">
      <label for="organizations-search">Search by name or id</label>
      <input id="organizations-search" type="search" value={text} maxLength={255} autoComplete="off" onInput={(event) => setText(event.currentTarget.value)} data-testid="organizations-search" />
      <button type="submit" class="button button-small" data-testid="organizations-search-submit">
        Search
      </button>
      {search && (
        <button type="button" class="button button-small" onClick={() => { setText(""); onSearch(""); }} data-testid="organizations-search-clear">
          Show all
        </button>
      )}
    </form>
  );
}

function CreateOrganization() {
  const [name, setName] = useState("");
  const [billingMode, setBillingMode] = useState("");
  const [planLabel, setPlanLabel] = useState("");
  const [error, setError] = useState<{ message: string; field?: string }>();
  const [busy, setBusy] = useState(false);
  const announce = useAnnounce();
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    if (!name.trim()) {
      setError({ message: "Give the organization a name.", field: "name" });
      return;
    }
    setBusy(true);
    try {
      const body: Record<string, unknown> = { name };
      if (billingMode) body.billingMode = billingMode;
      if (planLabel.trim()) body.planLabel = planLabel.trim();
      const answer = await api<{ organization: Organization }>("POST", "/api/v1/operator/organizations", body);
      announce(`Organization ${answer.organization.name} created.`);
      navigate(`/operator/organizations/${encodeURIComponent(answer.organization.id)}`);
    } catch (failure) {
      if (!isAbort(failure)) setError({ message: inFormTerms(errorText(failure)), field: failure instanceof ApiError ? failure.field : undefined });
      setBusy(false);
    }
  };
  const known = ["name", "billingMode", "planLabel"];
  return (
    <section class="card" aria-labelledby="create-organization-heading">
      <h2 id="create-organization-heading">Create an organization</h2>
      <form class="form form-inline" onSubmit={submit} noValidate data-testid="create-organization-form">
        <Field label="Name" error={error?.field === "name" ? error.message : undefined}>
          {(props) => <input {...props} type="text" value={name} maxLength={255} onInput={(event) => setName(event.currentTarget.value)} data-testid="create-organization-name" />}
        </Field>
        <Field label="Billing" error={error?.field === "billingMode" ? error.message : undefined}>
          {(props) => (
            <select {...props} value={billingMode} onChange={(event) => setBillingMode(event.currentTarget.value)} data-testid="create-organization-billing">
              <option value="">Not set</option>
              <option value="subscription">Subscription</option>
              <option value="prepaid">Prepaid</option>
            </select>
          )}
        </Field>
        <Field label="Plan label" error={error?.field === "planLabel" ? error.message : undefined}>
          {(props) => <input {...props} type="text" value={planLabel} maxLength={100} onInput={(event) => setPlanLabel(event.currentTarget.value)} data-testid="create-organization-plan" />}
        </Field>
        <button type="submit" class="button button-primary" disabled={busy} data-testid="create-organization-submit">
          {busy ? "Creating…" : "Create"}
        </button>
      </form>
      {error && !known.includes(error.field ?? "") && <ErrorMessage>{error.message}</ErrorMessage>}
    </section>
  );
}
