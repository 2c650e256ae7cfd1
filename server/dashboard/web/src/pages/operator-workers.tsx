// Served models and their workers with live load, polled every 2 s while the page is open.
import { useEffect, useState } from "preact/hooks";
import { api, ApiError, errorText, isAbort } from "../api";
import { ErrorMessage, Loading, TableScroll, useReady, useTitle } from "../components";
import { formatInteger, formatNumber } from "../format";
import type { ModelLoad } from "../types";

const POLL_MS = 2000;

export function WorkersPage() {
  useTitle("Models and workers");
  const [models, setModels] = useState<ModelLoad[]>();
  const [error, setError] = useState<string>();
  const [updatedAt, setUpdatedAt] = useState<Date>();
  useReady(models !== undefined || error !== undefined);

  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      try {
        const answer = await api<{ models: ModelLoad[] }>("GET", "/api/v1/operator/workers", undefined, { signal: controller.signal });
        if (controller.signal.aborted) return;
        setModels(answer.models);
        setError(undefined);
        setUpdatedAt(new Date());
      } catch (failure) {
        if (controller.signal.aborted || isAbort(failure)) return;
        setError(errorText(failure));
        if (failure instanceof ApiError && failure.status === 401) return;
      }
      timer = setTimeout(load, POLL_MS);
    };
    void load();
    return () => {
      controller.abort();
      if (timer) clearTimeout(timer);
    };
  }, []);

  return (
    <>
      <h1>Models and workers</h1>
      <p class="lead">
        Live load, refreshed every 2 seconds{updatedAt ? <> (last at {updatedAt.toLocaleTimeString()})</> : null}. Waiting is the queue depth; tokens per second are generated tokens over the last 10 seconds.
      </p>
      {error && <ErrorMessage>{error}</ErrorMessage>}
      {models === undefined && !error && <Loading what="Loading the load" />}
      {models && models.length === 0 && <p class="empty">No models are served here.</p>}
      {models && models.length > 0 && (
        <TableScroll label="Served models">
          <table class="table" data-testid="models-table">
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col" class="num">Waiting</th>
                <th scope="col" class="num">Running</th>
                <th scope="col">KV cache blocks</th>
                <th scope="col" class="num">Tokens/s</th>
                <th scope="col" class="num">Workers</th>
              </tr>
            </thead>
            <tbody>
              {models.map((model) => (
                <tr key={model.model} data-testid="model-load-row">
                  <th scope="row">{model.model}</th>
                  <td class="num" data-label="Waiting" data-testid="model-waiting">{formatInteger(model.waiting)}</td>
                  <td class="num" data-label="Running" data-testid="model-running">{formatInteger(model.running)}</td>
                  <td data-label="KV cache blocks">
                    <KvBar used={model.kvBlocksUsed} cached={model.kvBlocksCached} free={model.kvBlocksFree} />
                  </td>
                  <td class="num" data-label="Tokens/s" data-testid="model-tokens-per-second">{formatNumber(model.tokensPerSecond)}</td>
                  <td class="num" data-label="Workers">{model.workers.length ? formatInteger(model.workers.length) : "in process"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {models?.some((model) => model.workers.length > 0) && (
        <section aria-labelledby="workers-heading">
          <h2 id="workers-heading">Engine workers</h2>
          <TableScroll label="Engine workers">
            <table class="table" data-testid="workers-table">
              <thead>
                <tr>
                  <th scope="col">Worker</th>
                  <th scope="col">Model</th>
                  <th scope="col">Address</th>
                  <th scope="col" class="num">Waiting</th>
                  <th scope="col" class="num">Running</th>
                  <th scope="col">KV cache blocks</th>
                </tr>
              </thead>
              <tbody>
                {models.flatMap((model) =>
                  model.workers.map((worker) => (
                    <tr key={`${model.model} ${worker.id}`} data-testid="worker-row">
                      <th scope="row">
                        <code>{worker.id}</code>
                      </th>
                      <td data-label="Model">{model.model}</td>
                      <td data-label="Address">
                        <code>{worker.address}</code>
                      </td>
                      <td class="num" data-label="Waiting">{formatInteger(worker.waiting)}</td>
                      <td class="num" data-label="Running">{formatInteger(worker.running)}</td>
                      <td data-label="KV cache blocks">
                        <KvBar used={worker.kvBlocksUsed} free={worker.kvBlocksFree} />
                      </td>
                    </tr>
                  )),
                )}
              </tbody>
            </table>
          </TableScroll>
        </section>
      )}
    </>
  );
}

/** Used / cached / free KV blocks as one stacked bar, with the numbers as text beside it. */
function KvBar({ used, cached, free }: { used: number; cached?: number; free: number }) {
  const total = used + (cached ?? 0) + free;
  const share = (value: number) => (total > 0 ? `${(value / total) * 100}%` : "0%");
  const words = `${formatInteger(used)} used${cached !== undefined ? `, ${formatInteger(cached)} cached` : ""}, ${formatInteger(free)} free`;
  return (
    <div class="kv" data-testid="kv-bar">
      <div class="kv-bar" aria-hidden="true">
        <div class="kv-used" style={{ width: share(used) }} />
        {cached !== undefined && <div class="kv-cached" style={{ width: share(cached) }} />}
      </div>
      <span class="kv-text">{words}</span>
    </div>
  );
}
