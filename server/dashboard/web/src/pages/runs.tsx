// The organization's agent runs, newest first, with a status filter and paging.
import { useState } from "preact/hooks";
import { ErrorMessage, FilterSelect, LoadMore, Loading, StatusBadge, TableScroll, useReady, useTitle } from "../components";
import { usePagedList } from "../paged-list";
import { formatDuration, formatInteger, formatTime, shortId } from "../format";
import { href } from "../router";
import type { Run, RunStatus } from "../types";

const FILTERS: Array<{ value: "" | RunStatus; label: string }> = [
  { value: "", label: "All" },
  { value: "queued", label: "Queued" },
  { value: "processing", label: "Processing" },
  { value: "succeeded", label: "Succeeded" },
  { value: "failed", label: "Failed" },
];

export function RunsPage() {
  useTitle("Runs");
  const [status, setStatus] = useState<"" | RunStatus>("");
  const list = usePagedList<Run>("/api/v1/dashboard/runs", "runs", { status });
  useReady(list.loaded);
  const { items: runs, cursor, loading, loaded, error } = list;

  return (
    <>
      <h1>Runs</h1>
      <p class="lead">Agent runs created with POST /v1/runs, newest first.</p>
      <div class="toolbar">
        <FilterSelect id="run-status-filter" label="Status" value={status} options={FILTERS} onChange={setStatus} />
      </div>
      {error && <ErrorMessage>{error}</ErrorMessage>}
      {!loaded ? (
        <Loading what="Loading runs" />
      ) : runs.length === 0 && !error ? (
        <p class="empty" data-testid="runs-empty">
          {status ? `No ${status} runs.` : "No runs yet."}
        </p>
      ) : (
        <TableScroll label="Runs">
          <table class="table" data-testid="runs-table">
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">Status</th>
                <th scope="col">Question</th>
                <th scope="col">Engine</th>
                <th scope="col">Created</th>
                <th scope="col" class="num">Duration</th>
                <th scope="col" class="num">Tokens</th>
              </tr>
            </thead>
            <tbody>
              {runs.map((run) => (
                <tr key={run.runId} data-testid="run-row" data-run-id={run.runId}>
                  <th scope="row">
                    <a href={href(`/runs/${encodeURIComponent(run.runId)}`)} data-testid="run-link" title={run.runId}>
                      <code>{shortId(run.runId, 14)}</code>
                    </a>
                  </th>
                  <td data-label="Status">
                    <StatusBadge status={run.status} />
                  </td>
                  <td class="cell-question" data-label="Question">{run.question ?? ""}</td>
                  <td data-label="Engine">{run.engine}</td>
                  <td class="nowrap" data-label="Created">{formatTime(run.createdAt)}</td>
                  <td class="num" data-label="Duration">{run.status === "queued" ? "—" : formatDuration(run.usage.durationMs)}</td>
                  <td class="num" data-label="Tokens">{formatInteger(run.usage.inputTokens + run.usage.outputTokens)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <LoadMore cursor={cursor} loading={loading} onMore={list.loadMore} />
    </>
  );
}
