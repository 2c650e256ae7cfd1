// x402 payments, newest first, with a status filter and paging. Amounts are in the asset's smallest unit: USDC
// (6 decimals) is shown in dollars, any other asset as its raw amount.
import { useState } from "preact/hooks";
import { ErrorMessage, FilterSelect, LoadMore, Loading, StatusBadge, TableScroll, useReady, useTitle } from "../components";
import { usePagedList } from "../paged-list";
import { formatPaymentAmount, formatTime } from "../format";
import type { Payment, PaymentStatus } from "../types";

const FILTERS: Array<{ value: "" | PaymentStatus; label: string }> = [
  { value: "", label: "All" },
  { value: "settling", label: "Settling" },
  { value: "settled", label: "Settled" },
  { value: "failed", label: "Failed" },
];

function middle(text: string, keep = 8): string {
  return text.length > keep * 2 + 1 ? `${text.slice(0, keep + 2)}…${text.slice(-keep)}` : text;
}

export function PaymentsPage() {
  useTitle("Payments");
  const [status, setStatus] = useState<"" | PaymentStatus>("");
  const list = usePagedList<Payment>("/api/v1/operator/payments", "payments", { status });
  useReady(list.loaded);
  const { items: payments, cursor, loading, loaded, error } = list;

  return (
    <>
      <h1>Payments</h1>
      <p class="lead">x402 payments for machine runs, newest first.</p>
      <div class="toolbar">
        <FilterSelect id="payment-status-filter" label="Status" value={status} options={FILTERS} onChange={setStatus} />
      </div>
      {error && <ErrorMessage>{error}</ErrorMessage>}
      {!loaded ? (
        <Loading what="Loading payments" />
      ) : payments.length === 0 && !error ? (
        <p class="empty" data-testid="payments-empty">
          {status ? `No ${status} payments.` : "No payments yet."}
        </p>
      ) : (
        <TableScroll label="Payments">
          <table class="table" data-testid="payments-table">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">Amount</th>
                <th scope="col">Payer</th>
                <th scope="col">Transaction</th>
                <th scope="col">Run</th>
                <th scope="col">Kind</th>
                <th scope="col">Network</th>
              </tr>
            </thead>
            <tbody>
              {payments.map((payment) => (
                <tr key={payment.id} data-testid="payment-row" data-payment-id={payment.id}>
                  <th scope="row" class="nowrap">
                    {formatTime(payment.createdAt)}
                  </th>
                  <td data-label="Status">
                    <span>
                      <StatusBadge status={payment.status} />
                      {payment.error && <span class="cell-note">{payment.error}</span>}
                    </span>
                  </td>
                  <td class="num nowrap" data-label="Amount" data-testid="payment-amount">
                    {formatPaymentAmount(payment.amount, payment.asset)}
                  </td>
                  <td data-label="Payer">
                    <code title={payment.payer}>{middle(payment.payer)}</code>
                  </td>
                  <td data-label="Transaction">{payment.transaction ? <code title={payment.transaction}>{middle(payment.transaction)}</code> : "—"}</td>
                  <td data-label="Run">
                    <code title={payment.runId}>{middle(payment.runId, 10)}</code>
                  </td>
                  <td data-label="Kind">{payment.kind}</td>
                  <td data-label="Network">{payment.network}</td>
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
