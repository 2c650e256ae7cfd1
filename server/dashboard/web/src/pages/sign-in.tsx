// Sign in with a management key (an organization) or an operator token (`lop_...`). The key goes to the server once;
// the browser keeps only the HttpOnly session cookie the answer sets, and the field is cleared after every try.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, errorText } from "../api";
import { signInRefusal } from "../sign-in-refusal";
import type { SessionAnswer } from "../types";

type Kind = "organization" | "operator";

export function SignIn({ message, onSignedIn }: { message?: string; onSignedIn: (answer: SessionAnswer) => void }) {
  const [kind, setKind] = useState<Kind>("organization");
  const [secret, setSecret] = useState("");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    document.title = "Sign in · loom";
  }, []);

  const submit = async (event: Event) => {
    event.preventDefault();
    const value = secret.trim();
    setSecret("");
    if (input.current) input.current.value = "";
    if (!value) {
      setError(kind === "operator" ? "Enter an operator token." : "Enter a management key.");
      input.current?.focus();
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const body = kind === "operator" ? { operatorToken: value } : { managementKey: value };
      const answer = await api<SessionAnswer>("POST", "/api/v1/dashboard/session", body, { sessionCall: true });
      onSignedIn(answer);
    } catch (failure) {
      if (failure instanceof ApiError && failure.status === 401) {
        setError(signInRefusal(kind, value));
      } else if (failure instanceof ApiError && failure.status === 429) {
        setError(`Too many sign-in attempts.${failure.retryAfter ? ` Try again in ${failure.retryAfter} s.` : " Try again in a minute."}`);
      } else {
        setError(errorText(failure));
      }
      setBusy(false);
      input.current?.focus();
    }
  };

  const label = kind === "operator" ? "Operator token" : "Management key";
  return (
    <>
      <header class="header">
        <div class="header-inner">
          <span class="brand">
            loom <span class="brand-sub">dashboard</span>
          </span>
        </div>
      </header>
      <main id="main" class="main main-narrow" data-ready="true" data-page="signin">
        <h1>Sign in</h1>
        {message && (
          <p class="message message-info" role="status" data-testid="signin-message">
            {message}
          </p>
        )}
        <form class="card form" onSubmit={submit} data-testid="signin-form" noValidate>
          <fieldset class="choices">
            <legend>Sign in as</legend>
            <label class="choice">
              <input type="radio" name="kind" value="organization" checked={kind === "organization"} onChange={() => setKind("organization")} data-testid="signin-kind-organization" />
              An organization, with a management key
            </label>
            <label class="choice">
              <input type="radio" name="kind" value="operator" checked={kind === "operator"} onChange={() => setKind("operator")} data-testid="signin-kind-operator" />
              The operator, with an operator token
            </label>
          </fieldset>
          <div class="field">
            <label for="signin-secret">{label}</label>
            <input
              ref={input}
              id="signin-secret"
              type="password"
              autoComplete="off"
              spellcheck={false}
              value={secret}
              onInput={(event) => {
                const value = event.currentTarget.value;
                setSecret(value);
                if (value.startsWith("lop_")) setKind("operator");
              }}
              aria-describedby="signin-hint"
              aria-invalid={error ? true : undefined}
              data-testid="signin-secret"
            />
            <p class="field-hint" id="signin-hint">
              {kind === "operator" ? "Printed by loom admin operator-token create (starts with lop_)." : "One of your organization's management keys. It is not stored in this browser."}
            </p>
          </div>
          {error && (
            <p class="message message-error" role="alert" data-testid="signin-error">
              {error}
            </p>
          )}
          <button type="submit" class="button button-primary" disabled={busy} data-testid="signin-submit">
            {busy ? "Signing in…" : "Sign in"}
          </button>
        </form>
      </main>
    </>
  );
}
