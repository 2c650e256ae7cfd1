// One run: its question, steps (model turns, tool calls with arguments and results, notes), reasoning and answer;
// polled every second while it is queued or processing, with Cancel while it runs.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, errorText, isAbort } from "../api";
import { ConfirmDialog, ErrorMessage, Facts, Loading, StatusBadge, useAnnounce, useReady, useTitle } from "../components";
import { formatDuration, formatInteger, formatTime, pretty } from "../format";
import { href } from "../router";
import type { Callback, Run, RunAnswer, RunStep } from "../types";

const POLL_MS = 1000;
const running = (run: Run | undefined) => run?.status === "queued" || run?.status === "processing";

export function RunPage({ id }: { id: string }) {
  useTitle(`Run ${id}`);
  const [answer, setAnswer] = useState<RunAnswer>();
  const [error, setError] = useState<string>();
  const [loaded, setLoaded] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [generation, setGeneration] = useState(0);
  const announce = useAnnounce();
  const lastStatus = useRef<string | undefined>(undefined);
  useReady(loaded);

  // Load, then poll while the run is live; stops when it ends, on an error that will not heal, or when the page goes.
  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      try {
        const next = await api<RunAnswer>("GET", `/api/v1/dashboard/runs/${encodeURIComponent(id)}`, undefined, { signal: controller.signal });
        if (controller.signal.aborted) return;
        setAnswer(next);
        setError(undefined);
        setLoaded(true);
        if (lastStatus.current && lastStatus.current !== next.run.status) announce(`The run is now ${next.run.status}.`);
        lastStatus.current = next.run.status;
        if (running(next.run)) timer = setTimeout(load, POLL_MS);
      } catch (failure) {
        if (controller.signal.aborted || isAbort(failure)) return;
        setError(failure instanceof ApiError && failure.status === 404 ? "There is no such run in this organization." : errorText(failure));
        setLoaded(true);
        const final = failure instanceof ApiError && (failure.status === 404 || failure.status === 401 || failure.status === 403);
        if (!final) timer = setTimeout(load, POLL_MS * 3);
      }
    };
    void load();
    return () => {
      controller.abort();
      if (timer) clearTimeout(timer);
    };
  }, [id, generation]);

  const cancel = async () => {
    const poll = await api<Run>("POST", `/api/v1/dashboard/runs/${encodeURIComponent(id)}/cancel`);
    setAnswer((previous) => (previous ? { ...previous, run: { ...previous.run, ...poll } } : previous));
    announce("Cancel requested.");
    setGeneration((value) => value + 1);
  };

  const run = answer?.run;
  return (
    <>
      <p class="breadcrumb">
        <a href={href("/runs")} data-testid="back-to-runs">
          ← All runs
        </a>
      </p>
      <h1 class="run-title">
        Run <code>{id}</code>
      </h1>
      {error && <ErrorMessage>{error}</ErrorMessage>}
      {!answer && !error && <Loading what="Loading the run" />}
      {run && answer && (
        <>
          <div class="run-head">
            <p class="run-status" data-testid="run-status">
              <StatusBadge status={run.status} />
              {running(run) && <span class="live">Live: refreshed every second</span>}
            </p>
            {running(run) && (
              <button type="button" class="button button-danger-outline" onClick={() => setConfirming(true)} data-testid="run-cancel">
                Cancel run
              </button>
            )}
          </div>
          <section class="card" aria-labelledby="run-facts-heading">
            <h2 id="run-facts-heading" class="visually-hidden">
              Details
            </h2>
            <Facts
              testId="run-facts"
              items={[
                ["Engine", run.engine],
                ["Created", formatTime(run.createdAt)],
                ["Started", formatTime(run.startedAt)],
                ["Finished", formatTime(run.finishedAt)],
                ["Duration", run.status === "queued" ? "—" : formatDuration(run.usage.durationMs)],
                ["Input tokens", formatInteger(run.usage.inputTokens)],
                ["Output tokens", formatInteger(run.usage.outputTokens)],
              ]}
            />
          </section>
          {run.error && (
            <div class="message message-error" data-testid="run-error">
              <strong>Failed: {run.error.code}</strong> {run.error.message}
            </div>
          )}
          <section class="card" aria-labelledby="task-heading">
            <h2 id="task-heading">Task</h2>
            {run.instructions && (
              <>
                <h3>Instructions</h3>
                <p class="prose" data-testid="run-instructions">
                  {run.instructions}
                </p>
              </>
            )}
            <h3>Question</h3>
            <p class="prose" data-testid="run-question">
              {run.question || "—"}
            </p>
          </section>
          <section class="card" aria-labelledby="steps-heading">
            <h2 id="steps-heading">Steps</h2>
            {answer.steps.length === 0 ? (
              <p class="empty" data-testid="run-steps-empty">
                {run.status === "queued" ? "Waiting for a worker." : "No steps yet."}
              </p>
            ) : (
              <ol class="steps" data-testid="run-steps">
                {answer.steps.map((step) => (
                  <Step key={`${step.index}-${step.status}`} step={step} />
                ))}
              </ol>
            )}
          </section>
          {run.result && (
            <>
              <section class="card" aria-labelledby="reasoning-heading">
                <h2 id="reasoning-heading">Reasoning</h2>
                <Value value={run.result.reasoning} testId="run-reasoning" empty="No reasoning was recorded." />
              </section>
              <section class="card card-answer" aria-labelledby="answer-heading">
                <h2 id="answer-heading">Answer</h2>
                <Value value={run.result.answer} testId="run-answer" empty="The answer is empty." />
              </section>
            </>
          )}
          {answer.callback && <CallbackFacts callback={answer.callback} />}
        </>
      )}
      {confirming && (
        <ConfirmDialog title="Cancel this run?" confirmLabel="Cancel run" onConfirm={cancel} onClose={() => setConfirming(false)}>
          <p>The run stops and fails with the code cancelled. Its steps so far stay here; this cannot be undone.</p>
        </ConfirmDialog>
      )}
    </>
  );
}

/** A string as text (line breaks kept), anything else as pretty-printed JSON. */
function Value({ value, testId, empty }: { value: unknown; testId: string; empty: string }) {
  if (value === undefined || value === null || value === "") {
    return (
      <p class="empty" data-testid={testId}>
        {empty}
      </p>
    );
  }
  if (typeof value === "string") {
    return (
      <div class="prose prose-block" data-testid={testId} data-format="text">
        {value}
      </div>
    );
  }
  return (
    <pre class="code" data-testid={testId} data-format="json" tabIndex={0}>
      <code>{pretty(value)}</code>
    </pre>
  );
}

const LONG = 800;

function Step({ step }: { step: RunStep }) {
  const tokens = step.inputTokens + step.outputTokens;
  const meta = [
    step.attempt > 1 ? `take ${step.attempt}` : "",
    tokens ? `${formatInteger(step.inputTokens)} in / ${formatInteger(step.outputTokens)} out tokens` : "",
    step.durationMs != null ? formatDuration(step.durationMs) : "",
    formatTime(step.startedAt),
  ].filter(Boolean);
  return (
    <li class={`step step-${step.kind}`} data-testid="run-step" data-kind={step.kind} data-status={step.status}>
      <div class="step-head">
        <span class="step-title">{title(step)}</span>
        {step.status !== "finished" && <StatusBadge status={step.status} />}
        <span class="step-meta">{meta.join(" · ")}</span>
      </div>
      {step.kind === "model" && <ModelStep step={step} />}
      {step.kind === "tool" && <ToolStep step={step} />}
      {step.kind === "note" && <NoteStep step={step} />}
    </li>
  );
}

function title(step: RunStep): string {
  if (step.kind === "model") return step.purpose === "reasoning" ? "Model: describing its reasoning" : `Model turn${typeof step.turn === "number" ? ` ${step.turn}` : ""}`;
  if (step.kind === "tool") return `Tool call: ${String(step.tool ?? "unknown")}`;
  return `Note${typeof step.event === "string" ? `: ${step.event}` : ""}`;
}

function ModelStep({ step }: { step: RunStep }) {
  const calls = Array.isArray(step.toolCalls) ? (step.toolCalls as Array<{ id?: string; name?: string; arguments?: unknown }>) : [];
  const thinking = typeof step.thinking === "string" ? step.thinking : "";
  const text = typeof step.text === "string" ? step.text : "";
  return (
    <div class="step-body">
      {thinking && (
        <details class="details">
          <summary>Thinking ({formatInteger(thinking.length)} characters)</summary>
          <div class="prose prose-block prose-muted">{thinking}</div>
        </details>
      )}
      {text && <div class="prose prose-block" data-testid="step-text">{text}</div>}
      {calls.length > 0 && (
        <ul class="calls">
          {calls.map((call, index) => (
            <li key={call.id ?? index}>
              Calls <strong>{String(call.name ?? "a tool")}</strong> with
              <pre class="code code-small" tabIndex={0}>
                <code>{pretty(call.arguments)}</code>
              </pre>
            </li>
          ))}
        </ul>
      )}
      {typeof step.finish === "string" && step.finish !== "end_turn" && step.finish !== "tool_use" && <p class="muted">Stopped: {step.finish}</p>}
    </div>
  );
}

function ToolStep({ step }: { step: RunStep }) {
  const output = step.error !== undefined ? step.error : step.result;
  const text = output === undefined ? "" : pretty(output);
  return (
    <div class="step-body">
      <p class="step-label">Arguments</p>
      <pre class="code code-small" tabIndex={0} data-testid="step-arguments">
        <code>{pretty(step.arguments ?? {})}</code>
      </pre>
      {step.reexecuted ? <p class="muted">{String(step.reexecuted)}</p> : null}
      {step.notRun ? <p class="muted">Not run.</p> : null}
      {output !== undefined &&
        (text.length > LONG ? (
          <details class="details">
            <summary>
              {step.error !== undefined ? "Error" : "Result"} ({formatInteger(text.length)} characters)
            </summary>
            <pre class="code code-small code-wrap" tabIndex={0} data-testid="step-result">
              <code>{text}</code>
            </pre>
          </details>
        ) : (
          <>
            <p class="step-label">{step.error !== undefined ? "Error" : "Result"}</p>
            <pre class="code code-small code-wrap" tabIndex={0} data-testid="step-result">
              <code>{text}</code>
            </pre>
          </>
        ))}
      {output === undefined && step.status === "started" && <p class="muted">Running…</p>}
    </div>
  );
}

function NoteStep({ step }: { step: RunStep }) {
  const { index: _index, attempt: _attempt, kind: _kind, status: _status, inputTokens: _in, outputTokens: _out, startedAt: _at, durationMs: _ms, ...detail } = step;
  return (
    <div class="step-body">
      <pre class="code code-small" tabIndex={0}>
        <code>{pretty(detail)}</code>
      </pre>
    </div>
  );
}

function CallbackFacts({ callback }: { callback: Callback }) {
  return (
    <section class="card" aria-labelledby="callback-heading">
      <h2 id="callback-heading">Callback</h2>
      <Facts
        items={[
          ["URL", <code class="break">{callback.url}</code>],
          ["Status", callback.status],
          ["Delivered", formatTime(callback.deliveredAt)],
          ["Gave up", formatTime(callback.gaveUpAt)],
          ["Next attempt", formatTime(callback.nextAttemptAt)],
          ["Attempts", formatInteger(callback.attempts.length)],
        ]}
      />
    </section>
  );
}
