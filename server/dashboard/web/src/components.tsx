// Shared pieces: page readiness, loading data, dialogs, copy buttons, tables that scroll on phones, messages.
import type { ComponentChildren } from "preact";
import { createContext } from "preact";
import { useCallback, useContext, useEffect, useId, useRef, useState } from "preact/hooks";
import { errorText, isAbort } from "./api";

// ---- page readiness (`<main data-ready="true">`) and announcements (the aria-live region) ----

export interface Shell {
  /** The page marks itself loaded; `routeKey` ties it to the route it loaded for. */
  setReady(routeKey: string): void;
  routeKey: string;
  /** A polite status message for screen readers (and shown in the status bar). */
  announce(message: string): void;
}

export const ShellContext = createContext<Shell>({ setReady: () => {}, routeKey: "", announce: () => {} });

/** Marks the page ready once `ready` is true. */
export function useReady(ready: boolean): void {
  const shell = useContext(ShellContext);
  useEffect(() => {
    if (ready) shell.setReady(shell.routeKey);
  }, [ready, shell.routeKey]);
}

export function useAnnounce(): (message: string) => void {
  return useContext(ShellContext).announce;
}

export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · loom`;
  }, [title]);
}

// ---- loading ----

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload(): void;
  set(data: T): void;
}

/** Runs `load` when `deps` change (aborting the previous one), with a reload. */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    load(controller.signal).then(
      (value) => {
        if (controller.signal.aborted) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (failure) => {
        if (controller.signal.aborted || isAbort(failure)) return;
        setError(errorText(failure));
        setLoading(false);
      },
    );
    return () => controller.abort();
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((value) => value + 1), []);
  return { data, error, loading, reload, set: setData };
}

// ---- messages ----

export function ErrorMessage({ children, testId = "error" }: { children: ComponentChildren; testId?: string }) {
  return (
    <p class="message message-error" role="alert" data-testid={testId}>
      {children}
    </p>
  );
}

export function Loading({ what = "Loading" }: { what?: string }) {
  return (
    <p class="loading" data-testid="loading">
      {what}…
    </p>
  );
}

// ---- layout ----

/** A table inside a container that scrolls sideways on narrow screens (focusable, so keyboards can scroll it). */
export function TableScroll({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-scroll" role="region" aria-label={`${label} (table)`} tabIndex={0}>
      {children}
    </div>
  );
}

/** A list's filter: a labelled select of `options` whose value ("" for all) the list is filtered by. */
export function FilterSelect<V extends string>({ id, label, value, options, onChange }: { id: string; label: string; value: V; options: ReadonlyArray<{ value: V; label: string }>; onChange: (value: V) => void }) {
  return (
    <div class="filter">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(event) => onChange(event.currentTarget.value as V)} data-testid={id}>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  );
}

export function LoadMore({ cursor, loading, onMore }: { cursor: string | null | undefined; loading: boolean; onMore: () => void }) {
  if (!cursor) return null;
  return (
    <div class="load-more">
      <button type="button" class="button" onClick={onMore} disabled={loading} data-testid="load-more">
        {loading ? "Loading…" : "Load more"}
      </button>
    </div>
  );
}

/** A label/value list. */
export function Facts({ items, testId }: { items: Array<[string, ComponentChildren]>; testId?: string }) {
  return (
    <dl class="facts" data-testid={testId}>
      {items.map(([term, value]) => (
        <div class="fact" key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status.replace(/[^a-z_-]/gi, "")}`}>{status}</span>;
}

// ---- dialogs ----

/**
 * A modal dialog (native <dialog>: focus stays inside), labelled by its heading. Escape closes it, or with `onEscape`
 * calls that instead and the dialog stays open (to ask before something is lost).
 */
export function Dialog({ title, onClose, onEscape, children, testId = "dialog", wide = false }: { title: string; onClose: () => void; onEscape?: () => void; children: ComponentChildren; testId?: string; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  /** The page is closing the dialog (unmounting it): its `close` event is expected. */
  const closing = useRef(false);
  const escape = useRef(onEscape);
  escape.current = onEscape;
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const opener = document.activeElement as HTMLElement | null;
    if (!dialog.open) {
      if (typeof dialog.showModal === "function") dialog.showModal();
      else dialog.setAttribute("open", "");
    }
    return () => {
      closing.current = true;
      if (dialog.open) dialog.close();
      if (opener && document.contains(opener)) opener.focus();
    };
  }, []);
  const cancel = (event: Event) => {
    event.preventDefault();
    (escape.current ?? onClose)();
  };
  // Escape's default action is the close request: prevented here, the dialog stays whatever the browser's rules
  // on repeated close requests (Chromium lets a second Escape without a click close a dialog despite `cancel`).
  const keyDown = (event: KeyboardEvent) => {
    if (event.key !== "Escape" || !escape.current) return;
    event.preventDefault();
    escape.current();
  };
  // A dialog the browser closed by itself while the page still shows it is opened again, and asks.
  const closed = () => {
    const dialog = ref.current;
    if (closing.current || !dialog || !escape.current || typeof dialog.showModal !== "function") return;
    dialog.showModal();
    escape.current();
  };
  return (
    <dialog ref={ref} class={wide ? "dialog dialog-wide" : "dialog"} role="dialog" aria-modal="true" aria-labelledby={titleId} onCancel={cancel} onKeyDown={keyDown} onClose={closed} data-testid={testId}>
      <h2 id={titleId} class="dialog-title">
        {title}
      </h2>
      {children}
    </dialog>
  );
}

/** Asks before doing something that cannot be undone. */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  onConfirm,
  onClose,
}: {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await onConfirm();
      onClose();
    } catch (failure) {
      if (!isAbort(failure)) setError(errorText(failure));
      setBusy(false);
    }
  };
  return (
    <Dialog title={title} onClose={onClose} testId="confirm-dialog">
      <div class="dialog-body">{children}</div>
      {error && <ErrorMessage testId="confirm-error">{error}</ErrorMessage>}
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onClose} data-testid="confirm-cancel" autoFocus>
          Keep it
        </button>
        <button type="button" class="button button-danger" onClick={confirm} disabled={busy} data-testid="confirm">
          {busy ? "Working…" : confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}

// ---- copying ----

/** Selects the text of an element, for a manual copy when the clipboard API is not there. */
function selectText(element: HTMLElement): void {
  const selection = window.getSelection();
  if (!selection) return;
  const range = document.createRange();
  range.selectNodeContents(element);
  selection.removeAllRanges();
  selection.addRange(range);
}

/** Copies the text of the element `target` points at; without the clipboard API, selects it for Ctrl+C. */
export function CopyButton({ text, target, label, testId = "copy" }: { text: string; target: { current: HTMLElement | null }; label: string; testId?: string }) {
  const [state, setState] = useState<"idle" | "copied" | "selected">("idle");
  const announce = useAnnounce();
  const copy = async () => {
    try {
      if (!navigator.clipboard || !window.isSecureContext) throw new Error("no clipboard");
      await navigator.clipboard.writeText(text);
      setState("copied");
      announce("Copied to the clipboard.");
    } catch {
      if (target.current) selectText(target.current);
      setState("selected");
      announce("Selected: press Ctrl+C (⌘C) to copy.");
    }
  };
  useEffect(() => {
    if (state === "idle") return;
    const timer = setTimeout(() => setState("idle"), 4000);
    return () => clearTimeout(timer);
  }, [state]);
  return (
    <button type="button" class="button button-small" onClick={copy} aria-label={label} data-testid={testId}>
      {state === "copied" ? "Copied" : state === "selected" ? "Selected: press Ctrl+C" : "Copy"}
    </button>
  );
}

/** A block of code with a copy button. */
export function CodeBlock({ code, label, testId }: { code: string; label: string; testId?: string }) {
  const ref = useRef<HTMLElement>(null);
  return (
    <div class="code-block">
      <div class="code-block-bar">
        <span class="code-block-label">{label}</span>
        <CopyButton text={code} target={ref} label={`Copy ${label}`} testId={testId ? `${testId}-copy` : "copy"} />
      </div>
      <pre class="code" tabIndex={0} aria-label={label}>
        <code ref={ref} data-testid={testId}>
          {code}
        </code>
      </pre>
    </div>
  );
}

/** A new key's secret, shown once: copy it now or lose it. Escape asks before closing. */
export function SecretDialog({ secret, name, onClose }: { secret: string; name: string; onClose: () => void }) {
  const ref = useRef<HTMLElement>(null);
  const [asking, setAsking] = useState(false);
  const keepOpen = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) keepOpen.current?.focus();
  }, [asking]);
  return (
    <Dialog title="Your new key" onClose={onClose} onEscape={() => setAsking(true)} testId="secret-dialog" wide>
      <p class="message message-warning" data-testid="secret-warning">
        <strong>Copy this key now.</strong> It will not be shown again: loom keeps only a digest of it.
      </p>
      <p>
        Secret of <strong>{name}</strong>:
      </p>
      <div class="secret">
        <code ref={ref} class="secret-text" data-testid="new-key-secret">
          {secret}
        </code>
        <CopyButton text={secret} target={ref} label="Copy the key's secret" testId="copy-secret" />
      </div>
      {asking ? (
        <div class="message message-error" role="alert" data-testid="secret-close-question">
          <p>
            <strong>Close without the key?</strong> Its secret is not shown again: without a copy you will have to create another key.
          </p>
          <div class="dialog-actions">
            <button type="button" class="button" ref={keepOpen} onClick={() => setAsking(false)} data-testid="secret-keep-open">
              Back to the key
            </button>
            <button type="button" class="button button-danger" onClick={onClose} data-testid="secret-close-anyway">
              Close anyway
            </button>
          </div>
        </div>
      ) : (
        <div class="dialog-actions">
          <button type="button" class="button button-primary" onClick={onClose} data-testid="secret-done">
            I have copied it
          </button>
        </div>
      )}
    </Dialog>
  );
}

/** What a Field hands its control: its id and descriptions. */
export interface FieldProps {
  id: string;
  "aria-describedby"?: string;
  "aria-invalid"?: boolean;
}

/** A form field: label, control, and the server's error when it names this field. */
export function Field({ label, error, hint, children, id }: { label: string; error?: string; hint?: string; children: (props: FieldProps) => ComponentChildren; id?: string }) {
  const generated = useId();
  const fieldId = id ?? generated;
  const hintId = `${fieldId}-hint`;
  const errorId = `${fieldId}-error`;
  const describedBy = [hint ? hintId : "", error ? errorId : ""].filter(Boolean).join(" ") || undefined;
  return (
    <div class={error ? "field field-invalid" : "field"}>
      <label for={fieldId}>{label}</label>
      {children({ id: fieldId, "aria-describedby": describedBy, "aria-invalid": error ? true : undefined })}
      {hint && (
        <p class="field-hint" id={hintId}>
          {hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={errorId} data-testid="field-error">
          {error}
        </p>
      )}
    </div>
  );
}
