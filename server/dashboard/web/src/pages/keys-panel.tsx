// A list of keys with create (the secret shown once), paging and revoke: the organization's inference keys
// (/api/v1/dashboard/keys) or, for the operator, any organization's keys of both kinds.
import { useEffect, useState } from "preact/hooks";
import { api, errorText, isAbort } from "../api";
import { ConfirmDialog, ErrorMessage, Field, FilterSelect, LoadMore, Loading, SecretDialog, TableScroll, useAnnounce } from "../components";
import { formatTime } from "../format";
import { usePagedList } from "../paged-list";
import type { Key, NewKey } from "../types";

type KindFilter = "" | "inference" | "management";

const KIND_FILTERS: Array<{ value: KindFilter; label: string }> = [
  { value: "", label: "All" },
  { value: "inference", label: "Inference" },
  { value: "management", label: "Management" },
];

export function KeysPanel({ base, operator, onLoaded }: { base: string; operator: boolean; onLoaded?: () => void }) {
  const [kindFilter, setKindFilter] = useState<KindFilter>("");
  const [name, setName] = useState("");
  const [newKind, setNewKind] = useState<"inference" | "management">("inference");
  const [createError, setCreateError] = useState<{ message: string; field?: string }>();
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<NewKey>();
  const [revoking, setRevoking] = useState<Key>();
  const announce = useAnnounce();

  const list = usePagedList<Key>(base, "keys", { kind: operator ? kindFilter : "" });
  const { items: keys, setItems: setKeys, cursor, loading, loaded, error } = list;
  useEffect(() => {
    if (loaded) onLoaded?.();
  }, [loaded]);

  const create = async (event: Event) => {
    event.preventDefault();
    setCreateError(undefined);
    if (!name.trim()) {
      setCreateError({ message: "Give the key a name, e.g. the app that will use it.", field: "name" });
      return;
    }
    setCreating(true);
    try {
      const answer = await api<{ key: NewKey }>("POST", base, operator ? { kind: newKind, name } : { name });
      setSecret(answer.key);
      setName("");
      const { secret: _secret, ...listed } = answer.key;
      if (!operator || !kindFilter || kindFilter === listed.kind) setKeys((previous) => [listed, ...previous.filter((key) => key.id !== listed.id)]);
      announce(`Key ${answer.key.name} created.`);
    } catch (failure) {
      if (!isAbort(failure)) setCreateError({ message: errorText(failure), field: (failure as { field?: string }).field });
    } finally {
      setCreating(false);
    }
  };

  const revoke = async (key: Key) => {
    await api("DELETE", `${base}/${encodeURIComponent(key.id)}`);
    setKeys((previous) => previous.map((each) => (each.id === key.id ? { ...each, isActive: false } : each)));
    announce(`Key ${key.name} revoked.`);
  };

  const nameError = createError && createError.field !== "kind" ? createError.message : undefined;
  return (
    <div class="keys">
      <section class="card" aria-labelledby="create-key-heading">
        <h2 id="create-key-heading">Create a key</h2>
        <form class="form form-inline" onSubmit={create} data-testid="create-key-form" noValidate>
          {operator && (
            <Field label="Kind" error={createError?.field === "kind" ? createError.message : undefined}>
              {(props) => (
                <select {...props} value={newKind} onChange={(event) => setNewKind(event.currentTarget.value as "inference" | "management")} data-testid="create-key-kind">
                  <option value="inference">Inference (calls the API)</option>
                  <option value="management">Management (signs in here)</option>
                </select>
              )}
            </Field>
          )}
          <Field label="Key name" error={nameError}>
            {(props) => <input {...props} type="text" value={name} maxLength={255} autoComplete="off" onInput={(event) => setName(event.currentTarget.value)} data-testid="create-key-name" />}
          </Field>
          <button type="submit" class="button button-primary" disabled={creating} data-testid="create-key-submit">
            {creating ? "Creating…" : "Create key"}
          </button>
        </form>
      </section>

      <section aria-labelledby="key-list-heading">
        <div class="section-head">
          <h2 id="key-list-heading">{operator ? "Keys of this organization" : "Inference keys"}</h2>
          {operator && (
            <FilterSelect id="key-kind-filter" label="Kind" value={kindFilter} options={KIND_FILTERS} onChange={setKindFilter} />
          )}
        </div>
        {error && <ErrorMessage>{error}</ErrorMessage>}
        {!loaded ? (
          <Loading what="Loading keys" />
        ) : keys.length === 0 && !error ? (
          <p class="empty" data-testid="keys-empty">
            No keys yet.
          </p>
        ) : (
          <TableScroll label="Keys">
            <table class="table" data-testid="keys-table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  {operator && <th scope="col">Kind</th>}
                  <th scope="col">Prefix</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.map((key) => (
                  <tr key={key.id} data-testid="key-row" data-key-id={key.id} class={key.isActive ? undefined : "row-muted"}>
                    <th scope="row" class="cell-name" data-testid="key-name">
                      {key.name}
                    </th>
                    {operator && <td data-label="Kind">{key.kind ?? "—"}</td>}
                    <td data-label="Prefix">
                      <code>{key.keyPrefix}…</code>
                    </td>
                    <td data-label="Status" data-testid="key-status">{key.isActive ? <span class="badge badge-succeeded">active</span> : <span class="badge badge-revoked">revoked</span>}</td>
                    <td class="nowrap" data-label="Created">{formatTime(key.createdAt)}</td>
                    <td class="nowrap" data-label="Last used">{formatTime(key.lastUsedAt, "never")}</td>
                    <td class="cell-actions">
                      {key.isActive && (
                        <button type="button" class="button button-small button-danger-outline" onClick={() => setRevoking(key)} aria-label={`Revoke key ${key.name}`} data-testid="revoke-key">
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
        <LoadMore cursor={cursor} loading={loading} onMore={list.loadMore} />
      </section>

      {secret && <SecretDialog secret={secret.secret} name={secret.name} onClose={() => setSecret(undefined)} />}
      {revoking && (
        <ConfirmDialog title="Revoke this key?" confirmLabel="Revoke key" onConfirm={() => revoke(revoking)} onClose={() => setRevoking(undefined)}>
          <p>
            <strong>{revoking.name}</strong> (<code>{revoking.keyPrefix}…</code>) stops working at once, for every app that uses it. This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
