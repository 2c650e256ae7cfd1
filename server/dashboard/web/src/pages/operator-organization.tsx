// One organization for the operator: its settings, the edit form (an OrganizationPatch holding only the fields that
// changed, as server/platform/store/organization-patch.ts defines them, with the server's `{error, field}` shown next
// to the field it names) and its keys.
import { useMemo, useState } from "preact/hooks";
import { api, ApiError, errorText, isAbort } from "../api";
import { ErrorMessage, Loading, useAnnounce, useLoad, useReady, useTitle } from "../components";
import { ORGANIZATION_FIELD_LABELS, fieldLabel, inFormTerms } from "../field-labels";
import { formatDollars } from "../format";
import { href } from "../router";
import type { ModelPrice, Organization } from "../types";
import { KeysPanel } from "./keys-panel";
import { OrganizationFacts, PricesTable } from "./organization-facts";

export function OrganizationPage({ id }: { id: string }) {
  const organization = useLoad((signal) => api<{ organization: Organization }>("GET", `/api/v1/operator/organizations/${encodeURIComponent(id)}`, undefined, { signal }).then((answer) => answer.organization), [id]);
  const [keysLoaded, setKeysLoaded] = useState(false);
  const [saved, setSaved] = useState(false);
  useTitle(organization.data ? organization.data.name : "Organization");
  useReady(!organization.loading && (keysLoaded || !!organization.error));
  const data = organization.data;
  return (
    <>
      <p class="breadcrumb">
        <a href={href("/operator/organizations")} data-testid="back-to-organizations">
          ← All organizations
        </a>
      </p>
      <h1>{data ? data.name : "Organization"}</h1>
      {organization.error && <ErrorMessage>{organization.error}</ErrorMessage>}
      {!data && organization.loading && <Loading what="Loading the organization" />}
      {data && (
        <>
          <p class="muted">
            Id <code>{data.id}</code>
          </p>
          <div class="columns">
            <section class="card" aria-labelledby="settings-heading">
              <h2 id="settings-heading">Settings</h2>
              <OrganizationFacts organization={data} />
              <h3>Prices</h3>
              <PricesTable prices={data.prices} />
            </section>
            <EditOrganization
              key={JSON.stringify(data)}
              organization={data}
              saved={saved}
              onSaved={(next) => {
                organization.set(next);
                setSaved(true);
              }}
              onEdit={() => setSaved(false)}
            />
          </div>
          <KeysPanel base={`/api/v1/operator/organizations/${encodeURIComponent(data.id)}/keys`} operator onLoaded={() => setKeysLoaded(true)} />
        </>
      )}
    </>
  );
}

interface PriceRow {
  model: string;
  input: string;
  output: string;
  /** Present in the organization when the form opened. */
  existing: boolean;
  remove: boolean;
}

interface Form {
  name: string;
  billingMode: string;
  planLabel: string;
  planStatus: string;
  isUnlimitedComp: boolean;
  allowanceBasis: string;
  allowanceAmount: string;
  allowanceHardCap: boolean;
  creditBalanceDollars: string;
  addCreditsDollars: string;
  closedBeta: boolean;
  requestsPerMinute: string;
  tokensPerMinute: string;
  tokensPerDay: string;
  pool: string;
  prices: PriceRow[];
}

const text = (value: number | null | undefined) => (value === undefined || value === null ? "" : String(value));

function formOf(organization: Organization): Form {
  return {
    name: organization.name,
    billingMode: organization.billingMode ?? "",
    planLabel: organization.plan.label ?? "",
    planStatus: organization.plan.status ?? "",
    isUnlimitedComp: organization.plan.isUnlimitedComp,
    allowanceBasis: organization.dailyAllowance?.basis ?? "",
    allowanceAmount: text(organization.dailyAllowance?.amount),
    allowanceHardCap: organization.dailyAllowance?.hardCap ?? false,
    creditBalanceDollars: String(organization.creditBalanceDollars),
    addCreditsDollars: "",
    closedBeta: organization.closedBeta,
    requestsPerMinute: text(organization.limits.requestsPerMinute),
    tokensPerMinute: text(organization.limits.tokensPerMinute),
    tokensPerDay: text(organization.limits.tokensPerDay),
    pool: organization.pool ?? "",
    prices: Object.entries(organization.prices).map(([model, price]) => ({ model, input: String(price.inputPerMillion), output: String(price.outputPerMillion), existing: true, remove: false })),
  };
}

class FormError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

function number(field: string, value: string, what: string): number {
  const parsed = Number(value.trim());
  if (value.trim() === "" || !Number.isFinite(parsed)) throw new FormError(field, `${fieldLabel(field)} must be ${what}.`);
  return parsed;
}

/** The patch: only the fields whose value differs from the organization's. */
function patchOf(form: Form, organization: Organization): Record<string, unknown> {
  const start = formOf(organization);
  const patch: Record<string, unknown> = {};
  if (form.name !== start.name) patch.name = form.name;
  if (form.billingMode !== start.billingMode) patch.billingMode = form.billingMode || null;
  if (form.planLabel.trim() !== start.planLabel) patch.planLabel = form.planLabel.trim() || null;
  if (form.planStatus.trim() !== start.planStatus) patch.planStatus = form.planStatus.trim() || null;
  if (form.isUnlimitedComp !== start.isUnlimitedComp) patch.isUnlimitedComp = form.isUnlimitedComp;
  const basisChanged = form.allowanceBasis !== start.allowanceBasis;
  if (basisChanged) patch.allowanceBasis = form.allowanceBasis || null;
  if (form.allowanceBasis) {
    if (basisChanged || form.allowanceAmount.trim() !== start.allowanceAmount) {
      patch.allowanceAmount = number("allowanceAmount", form.allowanceAmount, form.allowanceBasis === "tokens" ? "a whole number of tokens" : "a number of dollars");
    }
    if (basisChanged || form.allowanceHardCap !== start.allowanceHardCap) patch.allowanceHardCap = form.allowanceHardCap;
  }
  if (form.creditBalanceDollars.trim() !== start.creditBalanceDollars) patch.creditBalanceDollars = number("creditBalanceDollars", form.creditBalanceDollars, "a number of dollars");
  if (form.addCreditsDollars.trim() !== "") patch.addCreditsDollars = number("addCreditsDollars", form.addCreditsDollars, "a number of dollars (negative to take away)");
  if (form.closedBeta !== start.closedBeta) patch.closedBeta = form.closedBeta;
  for (const limit of ["requestsPerMinute", "tokensPerMinute", "tokensPerDay"] as const) {
    if (form[limit].trim() !== start[limit]) patch[limit] = form[limit].trim() === "" ? null : number(limit, form[limit], "a whole number of at least 1, or empty for no limit");
  }
  if (form.pool.trim() !== start.pool) patch.pool = form.pool.trim() || null;
  const prices: Record<string, ModelPrice | null> = {};
  for (const row of form.prices) {
    const model = row.model.trim();
    if (!model) {
      if (row.input.trim() || row.output.trim()) throw new FormError("prices (a model slug)", "Name the model of a new price (or * for any other model).");
      continue;
    }
    if (row.remove) {
      if (row.existing) prices[model] = null;
      continue;
    }
    const before = organization.prices[model];
    const price = { inputPerMillion: number(`prices.${model}.inputPerMillion`, row.input, "a price in dollars"), outputPerMillion: number(`prices.${model}.outputPerMillion`, row.output, "a price in dollars") };
    if (!before || before.inputPerMillion !== price.inputPerMillion || before.outputPerMillion !== price.outputPerMillion || !row.existing) prices[model] = price;
  }
  if (Object.keys(prices).length > 0) patch.prices = prices;
  return patch;
}

function EditOrganization({ organization, saved, onSaved, onEdit }: { organization: Organization; saved: boolean; onSaved: (organization: Organization) => void; onEdit: () => void }) {
  const [form, setForm] = useState<Form>(() => formOf(organization));
  const [error, setError] = useState<{ field?: string; message: string }>();
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<string>();
  const announce = useAnnounce();
  const set = <K extends keyof Form>(name: K, value: Form[K]) => {
    setForm((previous) => ({ ...previous, [name]: value }));
    if (saved) onEdit();
  };
  const fieldError = (field: string) => (error?.field === field && atField ? error.message : undefined);
  const fields = useMemo(() => new Set(["name", "billingMode", "planLabel", "planStatus", "isUnlimitedComp", "allowanceBasis", "allowanceAmount", "allowanceHardCap", "creditBalanceDollars", "addCreditsDollars", "closedBeta", "requestsPerMinute", "tokensPerMinute", "tokensPerDay", "pool"]), []);
  const priceField = error?.field?.startsWith("prices") ?? false;
  // The server's error goes next to the field it names when that field is on the form, else under the form.
  const atField = !!error?.field && fields.has(error.field) && (!["allowanceAmount", "allowanceHardCap"].includes(error.field) || !!form.allowanceBasis);

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setNotice(undefined);
    let patch: Record<string, unknown>;
    try {
      patch = patchOf(form, organization);
    } catch (failure) {
      if (failure instanceof FormError) setError({ field: failure.field, message: failure.message });
      return;
    }
    if (Object.keys(patch).length === 0) {
      setNotice("Nothing changed.");
      return;
    }
    setBusy(true);
    try {
      const answer = await api<{ organization: Organization }>("PATCH", `/api/v1/operator/organizations/${encodeURIComponent(organization.id)}`, patch);
      announce("Saved.");
      onSaved(answer.organization);
    } catch (failure) {
      // The server names the patch's fields (requestsPerMinute): the message says the form's labels.
      if (!isAbort(failure)) setError({ message: inFormTerms(errorText(failure)), field: failure instanceof ApiError ? failure.field : undefined });
    } finally {
      setBusy(false);
    }
  };

  const input = (field: keyof Form & string, label: string, options: { hint?: string; inputMode?: "decimal" | "numeric" | "text"; maxLength?: number } = {}) => (
    <TextField field={field} label={label} value={form[field] as string} onInput={(value) => set(field, value as never)} error={fieldError(field)} hint={options.hint} inputMode={options.inputMode} maxLength={options.maxLength} />
  );
  const checkbox = (field: keyof Form & string, label: string) => (
    <div class={fieldError(field) ? "field field-check field-invalid" : "field field-check"}>
      <input id={`org-${field}`} type="checkbox" checked={form[field] as boolean} onChange={(event) => set(field, event.currentTarget.checked as never)} data-testid={`org-${field}`} aria-describedby={fieldError(field) ? `org-${field}-error` : undefined} />
      <label for={`org-${field}`}>{label}</label>
      {fieldError(field) && (
        <p class="field-error" id={`org-${field}-error`} data-testid="field-error">
          {fieldError(field)}
        </p>
      )}
    </div>
  );
  const select = (field: keyof Form & string, label: string, choices: Array<[string, string]>) => (
    <div class={fieldError(field) ? "field field-invalid" : "field"}>
      <label for={`org-${field}`}>{label}</label>
      <select id={`org-${field}`} value={form[field] as string} onChange={(event) => set(field, event.currentTarget.value as never)} data-testid={`org-${field}`} aria-invalid={fieldError(field) ? true : undefined} aria-describedby={fieldError(field) ? `org-${field}-error` : undefined}>
        {choices.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
      {fieldError(field) && (
        <p class="field-error" id={`org-${field}-error`} data-testid="field-error">
          {fieldError(field)}
        </p>
      )}
    </div>
  );

  return (
    <section class="card" aria-labelledby="edit-heading">
      <h2 id="edit-heading">Edit</h2>
      <form class="form" onSubmit={submit} noValidate data-testid="edit-organization-form">
        <fieldset>
          <legend>Organization</legend>
          {input("name", "Name", { maxLength: 255 })}
          {input("pool", "Dedicated worker pool", { hint: "Empty: the shared pool." })}
          {checkbox("closedBeta", "In the closed beta")}
        </fieldset>
        <fieldset>
          <legend>Plan and billing</legend>
          {select("billingMode", "Billing", [
            ["", "Not set"],
            ["subscription", "Subscription"],
            ["prepaid", "Prepaid"],
          ])}
          {input("planLabel", "Plan label", { maxLength: 100, hint: "Empty: none." })}
          {input("planStatus", "Plan status", { maxLength: 100, hint: "Empty: none." })}
          {checkbox("isUnlimitedComp", "Unlimited (complimentary)")}
        </fieldset>
        <fieldset>
          <legend>Daily allowance</legend>
          {select("allowanceBasis", ORGANIZATION_FIELD_LABELS.allowanceBasis!, [
            ["", "No allowance"],
            ["credit", "Credit (dollars)"],
            ["tokens", "Tokens"],
          ])}
          {form.allowanceBasis && (
            <>
              {input("allowanceAmount", `${ORGANIZATION_FIELD_LABELS.allowanceAmount!} (${form.allowanceBasis === "tokens" ? "tokens" : "dollars"})`, { inputMode: "decimal" })}
              {checkbox("allowanceHardCap", "Hard cap (refuse requests past it)")}
            </>
          )}
        </fieldset>
        <fieldset>
          <legend>Credits</legend>
          {input("creditBalanceDollars", "Set the balance (dollars)", { inputMode: "decimal", hint: `Now ${formatDollars(organization.creditBalanceDollars)}.` })}
          {input("addCreditsDollars", ORGANIZATION_FIELD_LABELS.addCreditsDollars!, { inputMode: "decimal", hint: "Or add to the balance: negative to take away; applied atomically with spending. Not both." })}
        </fieldset>
        <fieldset>
          <legend>Limits</legend>
          {input("requestsPerMinute", "Requests per minute", { inputMode: "numeric", hint: "Empty: no limit." })}
          {input("tokensPerMinute", "Tokens per minute", { inputMode: "numeric", hint: "Empty: no limit." })}
          {input("tokensPerDay", "Tokens per day", { inputMode: "numeric", hint: "Empty: no limit." })}
        </fieldset>
        <fieldset>
          <legend>Prices (dollars per million tokens)</legend>
          <PricesEditor rows={form.prices} onChange={(rows) => set("prices", rows)} errorField={priceField ? error?.field : undefined} />
          {priceField && (
            <p class="field-error" data-testid="field-error" role="alert">
              {error?.message}
            </p>
          )}
        </fieldset>
        {error && !atField && !priceField && <ErrorMessage testId="edit-error">{error.message}</ErrorMessage>}
        {error && atField && (
          <p class="visually-hidden" role="alert">
            {error.message}
          </p>
        )}
        {saved && !error && (
          <p class="message message-info" data-testid="edit-saved">
            Saved.
          </p>
        )}
        {notice && (
          <p class="message message-info" role="status">
            {notice}
          </p>
        )}
        <div class="form-actions">
          <button type="submit" class="button button-primary" disabled={busy} data-testid="edit-organization-submit">
            {busy ? "Saving…" : "Save changes"}
          </button>
          <button type="button" class="button" onClick={() => { setForm(formOf(organization)); setError(undefined); setNotice(undefined); }} data-testid="edit-organization-reset">
            Reset
          </button>
        </div>
      </form>
    </section>
  );
}

function TextField({ field, label, value, onInput, error, hint, inputMode, maxLength }: { field: string; label: string; value: string; onInput: (value: string) => void; error?: string; hint?: string; inputMode?: "decimal" | "numeric" | "text"; maxLength?: number }) {
  const id = `org-${field}`;
  const describedBy = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined;
  return (
    <div class={error ? "field field-invalid" : "field"}>
      <label for={id}>{label}</label>
      <input id={id} type="text" value={value} inputMode={inputMode} maxLength={maxLength} autoComplete="off" onInput={(event) => onInput(event.currentTarget.value)} aria-invalid={error ? true : undefined} aria-describedby={describedBy} data-testid={id} />
      {hint && (
        <p class="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={`${id}-error`} data-testid="field-error">
          {error}
        </p>
      )}
    </div>
  );
}

function PricesEditor({ rows, onChange, errorField }: { rows: PriceRow[]; onChange: (rows: PriceRow[]) => void; errorField?: string }) {
  const update = (index: number, change: Partial<PriceRow>) => onChange(rows.map((row, position) => (position === index ? { ...row, ...change } : row)));
  const invalid = (row: PriceRow, part: string) => errorField === `prices.${row.model.trim()}.${part}` || errorField === `prices.${row.model.trim()}` || (part === "model" && errorField === "prices (a model slug)" && !row.existing);
  return (
    <div class="prices-editor">
      {rows.length === 0 && <p class="muted">No prices.</p>}
      {rows.map((row, index) => (
        <div class={row.remove ? "price-row price-row-removed" : "price-row"} key={index} data-testid="price-row">
          <div class="field">
            <label for={`price-${index}-model`}>Model</label>
            <input id={`price-${index}-model`} type="text" value={row.model} readOnly={row.existing} onInput={(event) => update(index, { model: event.currentTarget.value })} aria-invalid={invalid(row, "model") ? true : undefined} />
          </div>
          <div class="field">
            <label for={`price-${index}-input`}>Input</label>
            <input id={`price-${index}-input`} type="text" inputMode="decimal" value={row.input} disabled={row.remove} onInput={(event) => update(index, { input: event.currentTarget.value })} aria-invalid={invalid(row, "inputPerMillion") ? true : undefined} />
          </div>
          <div class="field">
            <label for={`price-${index}-output`}>Output</label>
            <input id={`price-${index}-output`} type="text" inputMode="decimal" value={row.output} disabled={row.remove} onInput={(event) => update(index, { output: event.currentTarget.value })} aria-invalid={invalid(row, "outputPerMillion") ? true : undefined} />
          </div>
          {row.existing ? (
            <div class="field field-check">
              <input id={`price-${index}-remove`} type="checkbox" checked={row.remove} onChange={(event) => update(index, { remove: event.currentTarget.checked })} />
              <label for={`price-${index}-remove`}>Remove</label>
            </div>
          ) : (
            <button type="button" class="button button-small" onClick={() => onChange(rows.filter((_, position) => position !== index))} aria-label={`Discard the new price row ${index + 1}`}>
              Discard
            </button>
          )}
        </div>
      ))}
      <button type="button" class="button button-small" onClick={() => onChange([...rows, { model: "", input: "", output: "", existing: false, remove: false }])} data-testid="add-price">
        Add a price
      </button>
    </div>
  );
}
