// Today against the daily allowance (GET /api/v1/usage's numbers), the last 30 UTC days per model as a chart and
// tables, and the prepaid balance.
import { useMemo } from "preact/hooks";
import { api } from "../api";
import { ErrorMessage, Loading, TableScroll, useLoad, useReady, useTitle } from "../components";
import { TokensChart, type ChartData } from "../chart";
import { formatDay, formatDollars, formatInteger, formatPercent, formatTimeWithUtc } from "../format";
import type { Organization, UsageAnswer, UsageDay, UsageSnapshot } from "../types";

const DAYS = 30;

export function UsagePage() {
  useTitle("Usage");
  const usage = useLoad((signal) => api<UsageAnswer>("GET", `/api/v1/dashboard/usage?days=${DAYS}`, undefined, { signal }), []);
  const organization = useLoad((signal) => api<{ organization: Organization }>("GET", "/api/v1/dashboard/organization", undefined, { signal }).then((answer) => answer.organization), []);
  useReady(!usage.loading && !organization.loading);
  return (
    <>
      <h1>Usage</h1>
      {usage.error && <ErrorMessage>{usage.error}</ErrorMessage>}
      {usage.loading && !usage.data ? <Loading what="Loading usage" /> : null}
      {usage.data && (
        <>
          <Today today={usage.data.today} organization={organization.data} series={usage.data.series} to={usage.data.to} />
          <History usage={usage.data} />
        </>
      )}
    </>
  );
}

function Today({ today, organization, series, to }: { today: UsageSnapshot; organization?: Organization; series: UsageDay[]; to: string }) {
  const allowance = today.plan.dailyAllowance;
  const amount = organization?.dailyAllowance;
  const todayRows = series.filter((row) => row.day === to);
  const total = today.models.reduce((sum, model) => sum + model.consumedToday, 0);
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
          <table class="table">
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
                {amount?.basis === "tokens" && (
                  <th scope="col" class="num">
                    Of the allowance
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {today.models.map((model) => {
                const row = todayRows.filter((each) => each.model === model.slug);
                const requests = row.reduce((sum, each) => sum + each.requests, 0);
                return (
                  <tr key={model.slug} data-testid="usage-today-row">
                    <th scope="row">{model.slug}</th>
                    <td class="num">{formatInteger(model.consumedToday)}</td>
                    <td class="num">{row.length ? formatInteger(requests) : "—"}</td>
                    {amount?.basis === "tokens" && <td class="num">{formatPercent(Math.round((model.consumedToday / amount.amount) * 10_000) / 100)}</td>}
                  </tr>
                );
              })}
            </tbody>
            {today.models.length > 1 && (
              <tfoot>
                <tr>
                  <th scope="row">All models</th>
                  <td class="num">{formatInteger(total)}</td>
                  <td class="num">{formatInteger(todayRows.reduce((sum, each) => sum + each.requests, 0))}</td>
                  {amount?.basis === "tokens" && <td class="num">{formatPercent(Math.round((total / amount.amount) * 10_000) / 100)}</td>}
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

function days(from: string, to: string): string[] {
  const list: string[] = [];
  const end = Date.parse(`${to}T00:00:00Z`);
  for (let at = Date.parse(`${from}T00:00:00Z`); at <= end && list.length < 400; at += 86_400_000) list.push(new Date(at).toISOString().slice(0, 10));
  return list;
}

function History({ usage }: { usage: UsageAnswer }) {
  const { chart, totals, byDay } = useMemo(() => {
    const allDays = days(usage.from, usage.to);
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
    const totals = models.map((model) => {
      const rows = usage.series.filter((row) => row.model === model);
      return {
        model,
        requests: rows.reduce((sum, row) => sum + row.requests, 0),
        inputTokens: rows.reduce((sum, row) => sum + row.inputTokens, 0),
        cachedInputTokens: rows.reduce((sum, row) => sum + row.cachedInputTokens, 0),
        outputTokens: rows.reduce((sum, row) => sum + row.outputTokens, 0),
      };
    });
    const byDay = [...usage.series].sort((a, b) => (a.day === b.day ? a.model.localeCompare(b.model) : a.day < b.day ? 1 : -1));
    return { chart, totals, byDay };
  }, [usage]);
  const label = `Line chart of tokens (input plus output) per UTC day per model, ${formatDay(usage.from)} to ${formatDay(usage.to)}. ${totals
    .map((total) => `${total.model}: ${formatInteger(total.inputTokens + total.outputTokens)} tokens in all`)
    .join("; ")}. The numbers per day are in the table below.`;
  return (
    <section class="card" aria-labelledby="history-heading" data-testid="usage-history">
      <h2 id="history-heading">Last {DAYS} days</h2>
      <p class="muted">
        Tokens per UTC day (input + output), {formatDay(usage.from)} to {formatDay(usage.to)}.
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
            <table class="table">
              <thead>
                <tr>
                  <th scope="col">Model</th>
                  <FigureHeaders />
                </tr>
              </thead>
              <tbody>
                {totals.map((total) => (
                  <tr key={total.model} data-testid="usage-total-row">
                    <th scope="row">{total.model}</th>
                    <FigureCells figures={total} />
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
                    <FigureHeaders />
                  </tr>
                </thead>
                <tbody>
                  {byDay.map((row) => (
                    <tr key={`${row.day} ${row.model}`} data-testid="usage-day-row">
                      <th scope="row" class="nowrap">
                        <time dateTime={row.day}>{formatDay(row.day)}</time>
                      </th>
                      <td>{row.model}</td>
                      <FigureCells figures={row} />
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

/** What the usage tables show of a day's or a model's use. */
type Figures = { requests: number; inputTokens: number; cachedInputTokens: number; outputTokens: number };

/** The figure columns' headers, in FigureCells' order. */
function FigureHeaders() {
  return (
    <>
      <th scope="col" class="num">Requests</th>
      <th scope="col" class="num">Input tokens</th>
      <th scope="col" class="num">Cached input</th>
      <th scope="col" class="num">Output tokens</th>
      <th scope="col" class="num">Tokens</th>
    </>
  );
}

/** One row's figures; tokens are input + output, as the chart counts them. */
function FigureCells({ figures }: { figures: Figures }) {
  return (
    <>
      <td class="num">{formatInteger(figures.requests)}</td>
      <td class="num">{formatInteger(figures.inputTokens)}</td>
      <td class="num">{formatInteger(figures.cachedInputTokens)}</td>
      <td class="num">{formatInteger(figures.outputTokens)}</td>
      <td class="num">{formatInteger(figures.inputTokens + figures.outputTokens)}</td>
    </>
  );
}
