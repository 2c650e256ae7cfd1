// `kill -9` of `loom serve` between a payment's settlement on chain and its answer: after a restart the run exists, the
// payment is recorded once, the chain moved the price once, and the client's retry under its payment identifier gets
// that run; the restarted server logs the payment it reconciled. In facilitator mode (PGlite) the kill comes after the
// facilitator settled and before it answers; in direct mode (PostgreSQL) after loom's relayer submitted the transfer
// and before loom sees the receipt.
import type { ChildProcess } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appendPaymentIdentifierToExtensions, generatePaymentId } from "@x402/extensions/payment-identifier";
import { afterAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { ensureTestModel } from "../../scripts/test-models.js";
import { openPlatform } from "../platform/platform.js";
import { TEST_BACKENDS, TEST_POSTGRES_URL, freshPlatform, temporaryDataDir } from "../platform/testing/test-databases.js";
import { type LoomProcess, startLoomServe } from "../testing/loom-process.js";
import { startFacilitatorServer } from "./testing/facilitator-server.js";
import { startLocalChain } from "./testing/local-chain.js";
import { localChainPayments } from "./testing/local-payments.js";
import { officialPayment, offerOf, paymentHeader } from "./testing/paying-clients.js";

const PRICE = 100_000n;
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
});

for (const backend of TEST_BACKENDS) {
  const mode = backend.name === "PGlite" ? "facilitator" : "direct";
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`a paid run survives kill -9 between settlement and answer (${mode} mode, ${backend.name})`, backend.reason), () => {
    it("after a restart the run exists, the payment is recorded once, and the retry gets the same run", async () => {
      failIfMissing(backend.reason);
      const chain = await startLocalChain({ payers: 1 });
      const facilitator = await startFacilitatorServer(chain);
      const fresh = await freshPlatform(backend);
      const configDir = temporaryDataDir();
      try {
        // The database (and its PostgreSQL schema), made and migrated before the server holds it.
        await (await openPlatform(fresh.options)).close();
        const model = await ensureTestModel("tiny-qwen3", "gguf", "q8_0");
        const config = join(configDir, "loom.json");
        writeFileSync(config, JSON.stringify({
          runs: { engines: { tim: { maxSteps: 1, maxStepTokens: 8, temperature: 0 } } },
          payments: localChainPayments(chain, mode === "facilitator" ? { mode, url: facilitator.url } : { mode }, 2),
        }));
        const database = "dataDir" in fresh.options && fresh.options.dataDir !== undefined
          ? ["--data-dir", fresh.options.dataDir]
          : ["--database-url", `${TEST_POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${fresh.options.schema}`)}`];
        const args = ["--model", model, "--port", "0", "--threads", "1", "--context", "512", "--config", config, ...database];
        const search = (server: LoomProcess, headers: Record<string, string> = {}) =>
          fetch(`${server.base}/v1/machines/searches`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ instructions: "What is loom?" }) });

        const first = await startLoomServe(args, { children });
        const offer = offerOf(await search(first));
        const extensions = appendPaymentIdentifierToExtensions(structuredClone(offer.extensions ?? {}), generatePaymentId("crash_"));
        const header = { "payment-signature": paymentHeader(await officialPayment(chain.accounts.payers[0]!, offer, extensions)) };
        const payeeBefore = await chain.balanceOf(chain.accounts.payTo.address);

        // The kill, at the point between the chain's transfer and loom's answer.
        const kill = async () => {
          first.child.kill("SIGKILL");
          await first.exited;
        };
        if (mode === "facilitator") {
          facilitator.afterSettle = kill;
        } else {
          chain.setIntercept(async (call, forward) => {
            const result = await forward();
            if (call.method === "eth_sendRawTransaction") await kill();
            return result;
          });
        }
        await expect(search(first, header)).rejects.toThrow();
        facilitator.afterSettle = undefined;
        chain.setIntercept(undefined);
        expect(await chain.balanceOf(chain.accounts.payTo.address)).toBe(payeeBefore + PRICE);

        const second = await startLoomServe(args, { children });
        // The client retries the same payment under its identifier: the reconciler finishes the payment from the
        // chain (its lease was 4 s, twice the settlement timeout) and the retry gets the run.
        const retried = await search(second, header);
        expect(retried.status).toBe(202);
        const { runId } = await retried.json() as { runId: string };
        // Recovery says what it finished, on stderr.
        expect(second.stderr()).toMatch(new RegExp(`loom: payments: reconciled payment pay_[0-9a-f]{32} \\(payer ${chain.accounts.payers[0]!.address.toLowerCase()}, nonce 0x[0-9a-f]{64}\\): settled, run ${runId} created\n`));
        const poll = await fetch(`${second.base}/v1/machines/searches/${runId}`);
        expect(poll.status).toBe(200);
        expect(await poll.json()).toMatchObject({ runId });
        // Nothing more moved on chain, and the restarted server settled nothing again.
        const settleCalls = facilitator.counts.settle;
        expect(await chain.balanceOf(chain.accounts.payTo.address)).toBe(payeeBefore + PRICE);
        second.child.kill("SIGTERM");
        await second.exited;
        expect(facilitator.counts.settle).toBe(settleCalls);

        const after = await openPlatform(fresh.options);
        try {
          const payments = await after.stores.payments.list();
          expect(payments).toEqual([expect.objectContaining({ status: "settled", runId, amount: String(PRICE), payer: chain.accounts.payers[0]!.address.toLowerCase(), transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) })]);
        } finally {
          await after.close();
        }
      } finally {
        await fresh.remove();
        rmSync(configDir, { recursive: true, force: true });
        await facilitator.close();
        await chain.close();
      }
    }, 240_000);
  });
}
