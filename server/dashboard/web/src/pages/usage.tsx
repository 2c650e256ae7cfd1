// Today against the daily allowance (GET /api/v1/usage's numbers), the last 7, 30 or 90 UTC days per model as a
// chart and tables, per key, in dollars where the organization has prices, as CSV to download, and the prepaid
// balance.
import { useMemo, useState } from "preact/hooks";
import { api } from "../api";
import { ErrorMessage, FilterSelect, Loading, TableScroll, useLoad, useReady, useTitle } from "../components";
import { TokensChart, type ChartData } from "../chart";
import { downloadCsv, toCsv } from "../csv";
import { formatDay, formatDollars, formatInteger, formatPercent, formatTimeWithUtc } from "../format";
import type { Organization, UsageAnswer, UsageDay, UsageKeysAnswer, UsageSnapshot } from "../types";

/** The spans the page offers (the API takes 1 to 90 days). */
type Span = "7" | "30" | "90";
const SPANS: Array<{ value: Span; label: string }> = [
  { value: "7", label: "Last 7 days" },
  { value: "30", label: "Last 30 days" },
  { value: "90", label: "Last 90 days" },
];

export function UsagePage() {
  useTitle("Usage");
  const [span, setSpan] = useState<Span>("30");
  const usage = useLoad((signal) => api<UsageAnswer>("GET", `/api/v1/dashboard/usage?days=${span}`, undefined, { signal }), [span]);
  // Per key is a read of its own (the slowest here with thousands of keys): the rest of the page does not wait for it.
  const keys = useLoad((signal) => api<UsageKeysAnswer>("GET", `/api/v1/dashboard/usage/keys?days=${span}`, undefined, { signal }), [span]);
  const organization = useLoad((signal) => api<{ organization: Organization }>("GET", "/api/v1/dashboard/organization", undefined, { signal }).then((answer) => answer.organization), []);
  useReady(!usage.loading && !organization.loading);
  // Dollars are shown where the organization has prices, or where its use cost something all the same.
  const priced = !!organization.data && Object.keys(organization.data.prices).length > 0;
  const showCost = priced || (usage.data?.series.some((row) => row.spendDollars > 0) ?? false);
  return (
    <>
      <h1>Usage</h1>
      {usage.error && <ErrorMessage>{usage.error}</ErrorMessage>}
      {usage.loading && !usage.data ? <Loading what="Loading usage" /> : null}
      {usage.data && (
        <>
          <Today today={usage.data.today} organization={organization.data} series={usage.data.series} to={usage.data.to} showCost={showCost} />
          <div class="toolbar">
            <FilterSelect id="usage-range" label="Days" value={span} options={SPANS} onChange={setSpan} />
            <Downloads usage={usage.data} keys={keys.loading ? undefined : keys.data} showCost={showCost} />
          </div>
          <History usage={usage.data} days={Number(span)} showCost={showCost} loading={usage.loading} />
          <section class="card" aria-labelledby="keys-usage-heading" data-testid="usage-keys" aria-busy={keys.loading ? true : undefined}>
            <h2 id="keys-usage-heading">By key, last {span} days</h2>
            {keys.error && <ErrorMessage>{keys.error}</ErrorMessage>}
            {keys.loading && !keys.data ? <Loading what="Loading the use per key" /> : null}
            {keys.data && <PerKey keys={keys.data} showCost={showCost} />}
          </section>
        </>
      )}
    </>
  );
}

function Today({ today, organization, series, to, showCost }: { today: UsageSnapshot; organization?: Organization; series: UsageDay[]; to: string; showCost: boolean }) {
  const allowance = today.plan.dailyAllowance;
  const amount = organization?.dailyAllowance;
  const todayRows = series.filter((row) => row.day === to);
  const total = today.models.reduce((sum, model) => sum + model.consumedToday, 0);
  const sumOf = (rows: UsageDay[], pick: (row: UsageDay) => number) => rows.reduce((sum, row) => sum + pick(row), 0);
  return (
    <section class="card" aria-labelledby="today-heading" data-testid="usage-today">
      <h2 id="today-heading">Today</h2>
      <p class="muted">Since midnight UTC ({formatDay(to)}).</p>
      {allowance === null ? (
        <p data-testid="usage-allowance">{today.plan.isUnlimitedComp ? "Unlimited plan: no daily allowance." : "No daily allowance is set for this organization."}</p>
      ) : allowance.basis === "unavailable" ? (
        <p data-testid="usage-allowance">
          Today's use of the allowance cannot be valued: a model used today has no price. The allowance resets {formatTimeWithUtc(allowance.resetAt)}.
        </p>
      ) : (
        <div class="allowance" data-testid="usage-allowance">
          <p class="allowance-figure">
            <strong data-testid="usage-percent">{formatPercent(allowance.percent)}</strong> of today's allowance
            {amount ? <> ({amount.basis === "tokens" ? `${formatInteger(amount.amount)} tokens` : formatDollars(amount.amount)} a day{amount.hardCap ? ", a hard cap" : ""})</> : null}
            {allowance.percent > 100 ? <span class="over"> (over the allowance)</span> : null}
          </p>
          <Bar percent={allowance.percent} label="Share of today's allowance used" />
          <p class="muted">Resets {formatTimeWithUtc(allowance.resetAt)}.</p>
        </div>
      )}
      {today.billingMode === "prepaid" && (
        <p data-testid="usage-credits">
          Credit balance: <strong>{today.credits.balanceDollars === null ? "—" : formatDollars(today.credits.balanceDollars)}</strong>
        </p>
      )}
      {today.models.length === 0 ? (
        <p class="empty" data-testid="usage-today-empty">
          No tokens used today.
        </p>
      ) : (
        <TableScroll label="Today's use by model">
          <table class="table" data-testid="usage-today-table">
            <caption class="visually-hidden">Tokens used today by model</caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col" class="num">
                  Tokens today
                </th>
                <th scope="col" class="num">
                  Requests
                </th>
                {showCost && (
                  <th scope="col" class="num">
                    Cost
                  </th>
                )}
                {amount?.basis === "tokens" && (
                  <th scope="col" class="num">
                    Of the allowance
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {today.models.map((model) => {
                const rows = todayRows.filter((each) => each.model === model.slug);
                return (
                  <tr key={model.slug} data-testid="usage-today-row">
                    <th scope="row">{model.slug}</th>
                    <td class="num" data-label="Tokens today">{formatInteger(model.consumedToday)}</td>
                    <td class="num" data-label="Requests">{rows.length ? formatInteger(sumOf(rows, (each) => each.requests)) : "—"}</td>
                    {showCost && <td class="num" data-label="Cost">{rows.length ? formatDollars(sumOf(rows, (each) => each.spendDollars)) : "—"}</td>}
                    {amount?.basis === "tokens" && <td class="num" data-label="Of the allowance">{formatPercent(Math.round((model.consumedToday / amount.amount) * 10_000) / 100)}</td>}
                  </tr>
                );
              })}
            </tbody>
            {today.models.length > 1 && (
              <tfoot>
                <tr>
                  <th scope="row">All models</th>
                  <td class="num" data-label="Tokens today">{formatInteger(total)}</td>
                  <td class="num" data-label="Requests">{formatInteger(sumOf(todayRows, (each) => each.requests))}</td>
                  {showCost && <td class="num" data-label="Cost">{formatDollars(sumOf(todayRows, (each) => each.spendDollars))}</td>}
                  {amount?.basis === "tokens" && <td class="num" data-label="Of the allowance">{formatPercent(Math.round((total / amount.amount) * 10_000) / 100)}</td>}
                </tr>
              </tfoot>
            )}
          </table>
        </TableScroll>
      )}
    </section>
  );
}

/** A horizontal bar; past 100% it is full and marked as over. */
export function Bar({ percent, label }: { percent: number; label: string }) {
  const width = Math.max(0, Math.min(100, percent));
  return (
    <div class={percent > 100 ? "bar bar-over" : percent >= 80 ? "bar bar-high" : "bar"} role="img" aria-label={`${label}: ${formatPercent(percent)}`}>
      <div class="bar-fill" style={{ width: `${width}%` }} />
    </div>
  );
}

function daysBetween(from: string, to: string): string[] {
  const list: string[] = [];
  const end = Date.parse(`${to}T00:00:00Z`);
  for (let at = Date.parse(`${from}T00:00:00Z`); at <= end && list.length < 400; at += 86_400_000) list.push(new Date(at).toISOString().slice(0, 10));
  return list;
}

/** What the usage tables show of a day's, a model's or a key's use. */
type Figures = { requests: number; inputTokens: number; cachedInputTokens: number; outputTokens: number; spendDollars: number };

function sumFigures(rows: readonly Figures[]): Figures {
  const total: Figures = { requests: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, spendDollars: 0 };
  for (const row of rows) {
    total.requests += row.requests;
    total.inputTokens += row.inputTokens;
    total.cachedInputTokens += row.cachedInputTokens;
    total.outputTokens += row.outputTokens;
    total.spendDollars += row.spendDollars;
  }
  return total;
}

function History({ usage, days, showCost, loading }: { usage: UsageAnswer; days: number; showCost: boolean; loading: boolean }) {
  const { chart, totals, byDay, all } = useMemo(() => {
    const allDays = daysBetween(usage.from, usage.to);
    const models = [...new Set(usage.series.map((row) => row.model))].sort();
    const index = new Map(allDays.map((day, position) => [day, position]));
    const chart: ChartData = {
      days: allDays,
      series: models.map((model) => {
        const values = allDays.map(() => 0);
        for (const row of usage.series) if (row.model === model && index.has(row.day)) values[index.get(row.day)!] += row.inputTokens + row.outputTokens;
        return { label: model, values };
      }),
    };
    const totals = models.map((model) => ({ model, ...sumFigures(usage.series.filter((row) => row.model === model)) }));
    const byDay = [...usage.series].sort((a, b) => (a.day === b.day ? a.model.localeCompare(b.model) : a.day < b.day ? 1 : -1));
    return { chart, totals, byDay, all: sumFigures(usage.series) };
  }, [usage]);
  const label = `Line chart of tokens (input plus output) per UTC day per model, ${formatDay(usage.from)} to ${formatDay(usage.to)}. ${totals
    .map((total) => `${total.model}: ${formatInteger(total.inputTokens + total.outputTokens)} tokens in all`)
    .join("; ")}. The numbers per day are in the table below.`;
  return (
    <section class="card" aria-labelledby="history-heading" data-testid="usage-history" aria-busy={loading ? true : undefined}>
      <h2 id="history-heading">Last {days} days</h2>
      <p class="muted">
        Tokens per UTC day (input + output), {formatDay(usage.from)} to {formatDay(usage.to)}.
        {showCost && (
          <>
            {" "}
            Cost in these days: <strong data-testid="usage-cost">{formatDollars(all.spendDollars)}</strong>.
          </>
        )}
      </p>
      {usage.series.length === 0 ? (
        <p class="empty" data-testid="usage-history-empty">
          No use in these days.
        </p>
      ) : (
        <>
          <TokensChart data={chart} label={label} />
          <h3>Totals by model</h3>
          <TableScroll label="Totals by model">
            <table class="table" data-testid="usage-totals-table">
              <thead>
                <tr>
                  <th scope="col">Model</th>
                  <FigureHeaders showCost={showCost} />
                </tr>
              </thead>
              <tbody>
                {totals.map((total) => (
                  <tr key={total.model} data-testid="usage-total-row">
                    <th scope="row">{total.model}</th>
                    <FigureCells figures={total} showCost={showCost} />
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
          <details class="details">
            <summary>Per day and model</summary>
            <TableScroll label="Use per day and model">
              <table class="table" data-testid="usage-days-table">
                <thead>
                  <tr>
                    <th scope="col">Day (UTC)</th>
                    <th scope="col">Model</th>
                    <FigureHeaders showCost={showCost} />
                  </tr>
                </thead>
                <tbody>
                  {byDay.map((row) => (
                    <tr key={`${row.day} ${row.model}`} data-testid="usage-day-row">
                      <th scope="row" class="nowrap">
                        <time dateTime={row.day}>{formatDay(row.day)}</time>
                      </th>
                      <td data-label="Model">{row.model}</td>
                      <FigureCells figures={row} showCost={showCost} />
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          </details>
        </>
      )}
    </section>
  );
}

/** Use per key over the same days, most tokens first. */
function PerKey({ keys: usage, showCost }: { keys: UsageKeysAnswer; showCost: boolean }) {
  const left = usage.keysWithUse - usage.keys.length;
  return (
    <>
      {usage.keys.length === 0 ? (
        <p class="empty" data-testid="usage-keys-empty">
          No key was used in these days.
        </p>
      ) : (
        <>
          <TableScroll label="Use per key">
            <table class="table" data-testid="usage-keys-table">
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Prefix</th>
                  <FigureHeaders showCost={showCost} />
                </tr>
              </thead>
              <tbody>
                {usage.keys.map((key) => (
                  <tr key={key.keyId} data-testid="usage-key-row" data-key-id={key.keyId}>
                    <th scope="row" class="cell-name">
                      {key.name}
                    </th>
                    <td data-label="Prefix">
                      <code>{key.keyPrefix}…</code>
                    </td>
                    <FigureCells figures={key} showCost={showCost} />
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
          {left > 0 && <p class="muted">The {formatInteger(usage.keys.length)} keys that used the most tokens; {formatInteger(left)} more had some use.</p>}
        </>
      )}
    </>
  );
}

/** The figure columns' headers, in FigureCells' order. */
function FigureHeaders({ showCost }: { showCost: boolean }) {
  return (
    <>
      {FIGURE_COLUMNS.filter((column) => showCost || column.label !== "Cost").map((column) => (
        <th scope="col" class="num" key={column.label}>
          {column.label}
        </th>
      ))}
    </>
  );
}

/** A figure column: its header and its cell's text. Tokens are input + output, as the chart counts them. */
const FIGURE_COLUMNS: Array<{ label: string; text: (figures: Figures) => string }> = [
  { label: "Requests", text: (figures) => formatInteger(figures.requests) },
  { label: "Input tokens", text: (figures) => formatInteger(figures.inputTokens) },
  { label: "Cached input", text: (figures) => formatInteger(figures.cachedInputTokens) },
  { label: "Output tokens", text: (figures) => formatInteger(figures.outputTokens) },
  { label: "Tokens", text: (figures) => formatInteger(figures.inputTokens + figures.outputTokens) },
  { label: "Cost", text: (figures) => formatDollars(figures.spendDollars) },
];

/** One row's figures, each cell labelled for the phone layout (the cards' "Requests  12"). */
function FigureCells({ figures, showCost }: { figures: Figures; showCost: boolean }) {
  return (
    <>
      {FIGURE_COLUMNS.filter((column) => showCost || column.label !== "Cost").map((column) => (
        <td class="num" data-label={column.label} key={column.label}>
          {column.text(figures)}
        </td>
      ))}
    </>
  );
}

/** CSV downloads of the numbers shown: per day and model, and per key. */
function Downloads({ usage, keys, showCost }: { usage: UsageAnswer; keys?: UsageKeysAnswer; showCost: boolean }) {
  const figureHeader = ["requests", "input_tokens", "cached_input_tokens", "output_tokens", ...(showCost ? ["cost_dollars"] : [])];
  const figures = (row: Figures) => [row.requests, row.inputTokens, row.cachedInputTokens, row.outputTokens, ...(showCost ? [row.spendDollars] : [])];
  const span = `${usage.from}-to-${usage.to}`;
  const byDay = () => downloadCsv(`usage-by-day-${span}.csv`, toCsv(["day", "model", ...figureHeader], usage.series.map((row) => [row.day, row.model, ...figures(row)])));
  const byKey = (answer: UsageKeysAnswer) => downloadCsv(`usage-by-key-${answer.from}-to-${answer.to}.csv`, toCsv(["key_id", "key_name", "key_prefix", ...figureHeader], answer.keys.map((key) => [key.keyId, key.name, key.keyPrefix, ...figures(key)])));
  return (
    <div class="downloads">
      <button type="button" class="button button-small" onClick={byDay} data-testid="usage-csv-days">
        Download CSV by day
      </button>
      <button type="button" class="button button-small" onClick={() => keys && byKey(keys)} disabled={!keys} data-testid="usage-csv-keys">
        Download CSV by key
      </button>
    </div>
  );
}
