// Machine payments: paid requests per second through x402 verification and settlement on a local chain in
// direct mode (loom's in-process facilitator submits `transferWithAuthorization` with its relayer key and waits for
// the receipt), against the peer: the same EIP-3009 transfers submitted straight to the chain by one relayer with
// viem (no HTTP, no database, no verification; the limit that the chain and one relayer impose). Then where one paid
// request's time goes (decode, facilitator verify, journal, settle, settlement record + run), and the latency of the
// 402 round trip every x402 client makes before paying, against a free poll, at concurrency 1-16.
//
// Run: npm run build:ts && node dist/bench/machine-payments.js [options] (USAGE below; --help prints it).
//
// Setup: the local chain (server/machines/testing/local-chain.ts: ganache 7.9 with eager instamine, chain id 8453, a
// USDC-like EIP-3009 token) in a forked child process behind its HTTP JSON-RPC bridge, as a chain node is another
// process; one funded payer per concurrent client. loom's runs server (startRunsServer) on PGlite in a temporary data
// dir, a ScriptedEngine that answers at once, payments in direct mode through the bridge; its run worker (concurrency
// 4) processes the paid runs in the background, as in production. Clients are `fetch` loops in this process: at
// concurrency c, c loops share each round's requests and send theirs back to back. Payments are v2
// (PAYMENT-SIGNATURE), hand-signed against the 402 offer's accepts[0] before each round, so signing is not timed; each
// client signs with its own payer. The peer submits the same pre-signed authorizations with one viem wallet client
// set up as direct mode's (the relayer's key, viem's nonce manager, receipts polled every 250 ms), c at a time.
// Each level runs its rounds interleaved (loom, peer, loom, peer, ...); one untimed warm-up round comes first.
import { fork, type ChildProcess } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { parseSignature, parseTransaction, recoverTransactionAddress, type Abi, type Address, type Hex, type TransactionSerialized } from "viem";
import { ChainState } from "../server/machines/chain-state.js";
import { Checkout } from "../server/machines/checkout.js";
import { openFacilitator, relayerClient } from "../server/machines/facilitator.js";
import { parseMachineBody } from "../server/machines/machine-request.js";
import { type CapturedRequest, PaymentGate } from "../server/machines/payment-gate.js";
import { type NewPayment, PaymentStore, type PaymentRecord, type Reservation } from "../server/machines/payment-store.js";
import { type PaymentsSettings, resolvePaymentsConfig } from "../server/machines/payments-config.js";
import { type ChainAccount, type LocalChain, type LocalChainAccounts, type RpcCall, startLocalChain } from "../server/machines/testing/local-chain.js";
import { localChainPayments } from "../server/machines/testing/local-payments.js";
import { handSignedPayment, offerOf, paymentHeader } from "../server/machines/testing/paying-clients.js";
import { TEST_BACKENDS } from "../server/platform/testing/test-databases.js";
import { checkRunSchema } from "../server/runs/routes.js";
import { fixedTools } from "../server/runs/testing/fixed-tools.js";
import { type RunsServer, startRunsServer } from "../server/runs/testing/runs-server.js";
import { ScriptedEngine } from "../server/testing/scripted-engine.js";
import { BenchCli } from "./bench-args.js";
import { median, percentile, printHeader } from "./bench-models.js";

const CHAIN_CHILD = "--chain-child";
/** Token units each payer starts with: 10,000 USDC, 100,000 searches. */
const PAYER_USDC = 10_000_000_000n;
const SEARCH_BODY = { instructions: "How does loom keep its KV cache?" };
/** direct mode's settlement timeout here, as in the machine endpoint tests. */
const SETTLEMENT_TIMEOUT_SECONDS = 20;

// ---- the chain, in its own process ----

/** What the parent needs of the chain in the child: its address, token and keys. */
interface ChainInfo {
  rpcUrl: string;
  chainId: number;
  token: Address;
  tokenAbi: Abi;
  accounts: LocalChainAccounts;
}

/** CPU seconds the chain's process has used, and the JSON-RPC calls its bridge has answered, by method. */
interface ChainStats {
  cpuSeconds: number;
  rpcCalls: Record<string, number>;
}

type ChildMessage = { ready: ChainInfo } | { stats: ChainStats };

/** The child: starts the chain, counts the RPC calls that reach its bridge, answers "stats", stops on "close". */
async function serveChain(payers: number): Promise<void> {
  const chain = await startLocalChain({ payers, payerUsdc: PAYER_USDC });
  const rpcCalls: Record<string, number> = {};
  const sends = new NonceOrderedSends();
  chain.setIntercept((call, forward) => {
    rpcCalls[call.method] = (rpcCalls[call.method] ?? 0) + 1;
    if (call.method === "eth_sendRawTransaction") return sends.submit((call.params as Hex[])[0]!, forward);
    return call.method === "eth_estimateGas" ? sends.alone(forward) : forward();
  });
  const send = (message: ChildMessage) => process.send!(message);
  const stop = () => void chain.close().finally(() => process.exit(0));
  process.on("message", (message) => {
    if (message === "stats") send({ stats: { cpuSeconds: cpuSeconds(), rpcCalls: { ...rpcCalls } } });
    if (message === "close") stop();
  });
  process.on("disconnect", stop);
  send({ ready: { rpcUrl: chain.rpcUrl, chainId: chain.chainId, token: chain.token, tokenAbi: chain.tokenAbi, accounts: chain.accounts } });
}

/**
 * A mempool's ordering in front of ganache: raw transactions reach it one at a time, each sender's in nonce order.
 * Ganache's eager instamine answers a send only once its block is mined, and hangs on a transaction whose nonce is
 * ahead of the sender's (ganache #4165) or that arrives while the previous block is being mined (#2509's race); one
 * relayer settling concurrently sends nonces out of order, which a real node queues; and eth_estimateGas beside a
 * send now and then never answers. So sends and gas estimates go to ganache one at a time, and a send held here is
 * answered when it has been mined, as eager instamine answers it.
 */
class NonceOrderedSends {
  private readonly nextNonce = new Map<Address, number>();
  private readonly waiting = new Map<string, Array<() => void>>();
  private queue: Promise<unknown> = Promise.resolve();

  async submit(raw: Hex, forward: (call?: RpcCall) => Promise<unknown>): Promise<unknown> {
    const nonce = parseTransaction(raw).nonce ?? 0;
    const sender = await recoverTransactionAddress({ serializedTransaction: raw as TransactionSerialized });
    if (!this.nextNonce.has(sender)) {
      const count = Number(await forward({ method: "eth_getTransactionCount", params: [sender, "latest"] }));
      if (!this.nextNonce.has(sender)) this.nextNonce.set(sender, count);
    }
    if (nonce > this.nextNonce.get(sender)!) {
      const key = `${sender}:${nonce}`;
      await new Promise<void>((resolve) => this.waiting.set(key, [...(this.waiting.get(key) ?? []), resolve]));
    }
    const hash = await this.alone(forward); // a refused transaction leaves its nonce unused: later ones wait, as on a real chain
    if (nonce >= this.nextNonce.get(sender)!) {
      this.nextNonce.set(sender, nonce + 1);
      for (const wake of this.waiting.get(`${sender}:${nonce + 1}`) ?? []) wake();
      this.waiting.delete(`${sender}:${nonce + 1}`);
    }
    return hash;
  }

  /** Forwards a call when no other send or gas estimate is at ganache. */
  alone(forward: () => Promise<unknown>): Promise<unknown> {
    const answered = this.queue.then(() => forward());
    this.queue = answered.catch(() => undefined);
    return answered;
  }
}

/** The chain's child process, started and ready. */
class ChainProcess {
  private constructor(private readonly child: ChildProcess, readonly info: ChainInfo) {}

  static async start(payers: number): Promise<ChainProcess> {
    const child = fork(fileURLToPath(import.meta.url), [CHAIN_CHILD, String(payers)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    const info = await new Promise<ChainInfo>((resolve, reject) => {
      child.once("message", (message: ChildMessage) => ("ready" in message ? resolve(message.ready) : reject(new Error("the chain process spoke first of stats"))));
      child.once("exit", (code) => reject(new Error(`the chain process exited with ${code} before it was ready`)));
    });
    return new ChainProcess(child, info);
  }

  stats(): Promise<ChainStats> {
    return new Promise((resolve) => {
      this.child.once("message", (message: ChildMessage) => resolve((message as { stats: ChainStats }).stats));
      this.child.send("stats");
    });
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.send("close");
    await exited;
  }
}

// ---- measurement helpers ----

/** One batch of requests from concurrent clients: wall time, every request's latency, and what each came to. */
interface Batch {
  seconds: number;
  latenciesMs: number[];
  outcomes: Map<string, number>;
}

/** `clients` loops, each sending `perClient` requests back to back; `send` says what a request came to. */
async function runClients(clients: number, perClient: number, send: (client: number, index: number) => Promise<string>): Promise<Batch> {
  const latenciesMs: number[] = [];
  const outcomes = new Map<string, number>();
  const started = performance.now();
  await Promise.all(Array.from({ length: clients }, async (_, client) => {
    for (let index = 0; index < perClient; index++) {
      const sent = performance.now();
      let outcome: string;
      try {
        outcome = await send(client, index);
      } catch (error) {
        outcome = `threw: ${((error as Error).message ?? String(error)).slice(0, 160)}`;
      }
      latenciesMs.push(performance.now() - sent);
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
  }));
  return { seconds: (performance.now() - started) / 1000, latenciesMs, outcomes };
}

const perSecond = (batch: Batch) => batch.latenciesMs.length / batch.seconds;

/** "median (min to max)" of per-round figures. */
function spread(values: number[], digits = 1): string {
  return `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)} to ${Math.max(...values).toFixed(digits)})`;
}

/** Outcomes other than `expected`, as "count x outcome"; "none" when every request came to `expected`. */
function unexpected(batches: Batch[], expected: string): string {
  const counts = new Map<string, number>();
  for (const batch of batches) for (const [outcome, count] of batch.outcomes) if (outcome !== expected) counts.set(outcome, (counts.get(outcome) ?? 0) + count);
  return counts.size === 0 ? "none" : [...counts].map(([outcome, count]) => `${count} x ${outcome}`).join("; ");
}

/** An HTTP answer as an outcome: its status, and for a status other than `expected` the error it gave. */
async function outcomeOf(response: Response, expected: number): Promise<string> {
  const text = await response.text();
  if (response.status === expected) return String(expected);
  let error = text;
  try {
    error = String((JSON.parse(text) as { error?: unknown }).error ?? text);
  } catch {
    // Not JSON: the text itself.
  }
  return `${response.status} ${error.slice(0, 160)}`;
}

function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

// ---- the system under test and the peer ----

/** Direct mode's settings on the local chain, as the machine endpoint tests resolve them. */
function directSettings(chain: ChainInfo): PaymentsSettings {
  return resolvePaymentsConfig(localChainPayments(chain, { mode: "direct" }, SETTLEMENT_TIMEOUT_SECONDS));
}

/** `count` v2 payments by `payer` for `requirements`, signed now (valid for 10 minutes). */
function signPayments(chain: ChainInfo, payer: ChainAccount, requirements: PaymentRequirements, count: number): Promise<PaymentPayload[]> {
  // handSignedPayment reads only the token and chain id of the chain.
  const signingChain = { token: chain.token, chainId: chain.chainId } as LocalChain;
  return Promise.all(Array.from({ length: count }, () => handSignedPayment(signingChain, payer, requirements)));
}

/** The peer: one relayer submitting authorizations straight to the chain, with direct mode's own relayer client. */
function directRelayer(settings: PaymentsSettings, chain: ChainInfo) {
  if (settings.settlement.mode !== "direct") throw new Error("the peer relays as direct mode does");
  const client = relayerClient(settings.settlement, settings.network);
  /** Submits one authorization and waits for its receipt: "success" or "reverted". */
  return async (payment: PaymentPayload): Promise<string> => {
    const { signature, authorization } = payment.payload as { signature: Hex; authorization: Record<string, string> };
    const { v, r, s } = parseSignature(signature);
    const hash = await client.writeContract({
      address: chain.token,
      abi: chain.tokenAbi,
      functionName: "transferWithAuthorization",
      args: [authorization.from, authorization.to, BigInt(authorization.value!), BigInt(authorization.validAfter!), BigInt(authorization.validBefore!), authorization.nonce, Number(v), r, s],
    });
    const receipt = await client.waitForTransactionReceipt({ hash });
    return receipt.status;
  };
}

/** The time of each call of the journal's two writes. */
class TimedPaymentStore extends PaymentStore {
  readonly reserveMs: number[] = [];
  readonly settleMs: number[] = [];

  override async reserve(payment: NewPayment, leaseMs: number): Promise<Reservation> {
    return timed(this.reserveMs, () => super.reserve(payment, leaseMs));
  }

  override async settle(id: string, transaction: string | undefined): Promise<PaymentRecord> {
    return timed(this.settleMs, () => super.settle(id, transaction));
  }
}

/** The time of each on-chain settlement (the facilitator's settle: submit and wait for the receipt). */
class TimedPaymentGate extends PaymentGate {
  readonly settleMs: number[] = [];

  override async settle(payment: Parameters<PaymentGate["settle"]>[0]): ReturnType<PaymentGate["settle"]> {
    return timed(this.settleMs, () => super.settle(payment));
  }
}

async function timed<T>(into: number[], work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    into.push(performance.now() - started);
  }
}

/** Median milliseconds of each phase of a paid request, from `samples` sequential purchases through the server's own pieces. */
async function paidRequestPhases(server: RunsServer, settings: PaymentsSettings, chain: ChainInfo, requirements: PaymentRequirements, searchUrl: string, samples: number) {
  const gate = new TimedPaymentGate(settings, openFacilitator(settings.settlement, settings.network));
  await gate.initialize();
  const store = new TimedPaymentStore(server.platform.database);
  const checkout = new Checkout(gate, store, new ChainState(settings.settlement.rpcUrl, settings.asset.address), {
    network: settings.network.caip2,
    asset: settings.asset.address,
    settlementTimeoutMs: settings.settlement.timeoutMs,
    runCreated: () => server.runs.worker.notify(),
  });
  const spec = parseMachineBody("search", SEARCH_BODY, settings.searchEngine, checkRunSchema);
  const payments = await signPayments(chain, chain.accounts.payers[0]!, requirements, samples + 2);
  const phases = { challenge: [] as number[], decode: [] as number[], verify: [] as number[], buy: [] as number[] };
  for (const [index, payment] of payments.entries()) {
    const request: CapturedRequest = { headers: { "payment-signature": paymentHeader(payment) }, url: searchUrl, body: SEARCH_BODY };
    const challengeStarted = performance.now();
    await gate.challenge("search", { headers: {}, url: searchUrl, body: SEARCH_BODY }, "payment required");
    const decodeStarted = performance.now();
    const decoded = await gate.decode("search", request);
    if (!("decoded" in decoded)) throw new Error(`phases: the payment did not decode: ${JSON.stringify(decoded.answer.body)}`);
    const verifyStarted = performance.now();
    const verified = await gate.verify(request, decoded.decoded);
    if (!("verified" in verified)) throw new Error(`phases: the payment did not verify: ${JSON.stringify(verified.answer.body)}`);
    const buyStarted = performance.now();
    const purchase = await checkout.buy(verified.verified, spec);
    if (!("bought" in purchase)) throw new Error(`phases: the purchase failed: ${JSON.stringify(purchase)}`);
    const ended = performance.now();
    if (index < 2) continue; // warm-up
    phases.challenge.push(decodeStarted - challengeStarted);
    phases.decode.push(verifyStarted - decodeStarted);
    phases.verify.push(buyStarted - verifyStarted);
    phases.buy.push(ended - buyStarted);
  }
  const warm = (values: number[]) => values.slice(2);
  return {
    challenge: median(phases.challenge),
    decode: median(phases.decode),
    verify: median(phases.verify),
    reserve: median(warm(store.reserveMs)),
    settle: median(warm(gate.settleMs)),
    record: median(warm(store.settleMs)),
    buy: median(phases.buy),
  };
}

// ---- the bench ----

/** The command line; --help prints it. */
const USAGE = `node dist/bench/machine-payments.js [--levels 1,2,4,8,16] [--rounds 3] [--requests 32]
       [--free-requests 320] [--phase-samples 20]`;
const cli: BenchCli = new BenchCli("machine-payments", USAGE);

async function main(): Promise<void> {
  const values = cli.parse({
    levels: { type: "string", default: "1,2,4,8,16" },
    rounds: { type: "string", default: "3" },
    requests: { type: "string", default: "32" },
    "free-requests": { type: "string", default: "320" },
    "phase-samples": { type: "string", default: "20" },
  });
  const levels = cli.integers("levels", values.levels);
  const rounds = cli.integer("rounds", values.rounds);
  const requests = cli.integer("requests", values.requests);
  const freeRequests = cli.integer("free-requests", values["free-requests"]);
  const phaseSamples = cli.integer("phase-samples", values["phase-samples"]);
  const command = `node dist/bench/machine-payments.js --levels ${levels.join(",")} --rounds ${rounds} --requests ${requests} --free-requests ${freeRequests} --phase-samples ${phaseSamples}`;
  const clientsAtMost = Math.max(...levels);

  printHeader(command, 1, [
    `local chain: ganache (eager instamine, chain id 8453, EIP-3009 token) in a child process behind its HTTP JSON-RPC bridge; ${clientsAtMost} payers`,
    `loom: startRunsServer on PGlite (temporary data dir), ScriptedEngine answering at once, run worker concurrency 4, payments in direct mode (relayer key, receipts polled every 250 ms)`,
    `per round and level: ${requests} paid POST /v1/machines/searches (v2 PAYMENT-SIGNATURE, pre-signed), ${requests} peer transfers, ${freeRequests} unpaid POSTs (402) and ${freeRequests} polls; ${rounds} rounds`,
    `load average at the start (1/5/15 min): ${loadavg().map((x) => x.toFixed(2)).join(" / ")}`,
  ]);

  const chainProcess = await ChainProcess.start(clientsAtMost);
  const chain = chainProcess.info;
  const settings = directSettings(chain);
  const engine = new ScriptedEngine();
  engine.script = { deltas: ["Loom pages its KV cache."] };
  const server = await startRunsServer(TEST_BACKENDS.find((backend) => backend.name === "PGlite")!, { engine, runs: { tools: fixedTools }, payments: settings });
  const searchUrl = `${server.url}/v1/machines/searches`;
  try {
    const offer = offerOf(await postJson(searchUrl, SEARCH_BODY));
    const requirements = offer.accepts[0]!;
    const submitDirectly = directRelayer(settings, chain);
    let someRunId: string | undefined;

    const paidRound = async (clients: number): Promise<Batch> => {
      const perClient = Math.ceil(requests / clients);
      const signed = await Promise.all(Array.from({ length: clients }, (_, client) => signPayments(chain, chain.accounts.payers[client]!, requirements, perClient)));
      const headers = signed.map((payments) => payments.map(paymentHeader));
      return runClients(clients, perClient, async (client, index) => {
        const response = await postJson(searchUrl, SEARCH_BODY, { "payment-signature": headers[client]![index]! });
        if (response.status === 202) {
          someRunId ??= ((await response.clone().json()) as { runId: string }).runId;
        }
        return outcomeOf(response, 202);
      });
    };
    const peerRound = async (clients: number): Promise<Batch> => {
      const perClient = Math.ceil(requests / clients);
      const signed = await Promise.all(Array.from({ length: clients }, (_, client) => signPayments(chain, chain.accounts.payers[client]!, requirements, perClient)));
      return runClients(clients, perClient, (client, index) => submitDirectly(signed[client]![index]!));
    };
    const challengeRound = (clients: number) => runClients(clients, Math.ceil(freeRequests / clients), async () => outcomeOf(await postJson(searchUrl, SEARCH_BODY), 402));
    const pollRound = (clients: number) => runClients(clients, Math.ceil(freeRequests / clients), async () => outcomeOf(await fetch(`${searchUrl}/${someRunId}`), 200));

    /** A round's batch, and the CPU both processes and the RPC calls the chain answered during it. */
    const measured = async (round: () => Promise<Batch>) => {
      const cpuBefore = process.cpuUsage();
      const chainBefore = await chainProcess.stats();
      const batch = await round();
      const chainAfter = await chainProcess.stats();
      const cpu = process.cpuUsage(cpuBefore);
      const rpcCalls: Record<string, number> = {};
      for (const [method, count] of Object.entries(chainAfter.rpcCalls)) {
        const calls = count - (chainBefore.rpcCalls[method] ?? 0);
        if (calls > 0) rpcCalls[method] = calls;
      }
      return { batch, loomCpuSeconds: (cpu.user + cpu.system) / 1e6, chainCpuSeconds: chainAfter.cpuSeconds - chainBefore.cpuSeconds, rpcCalls };
    };
    type Measured = Awaited<ReturnType<typeof measured>>;

    // Paid requests against the peer, rounds interleaved.
    console.log("\n| clients | round | loom paid req/s | p50 ms | p95 ms | non-202 | peer transfers/s | p50 ms | p95 ms | loom / peer | CPU ms per paid request: loom process, chain process | per peer transfer: same |");
    console.log("|---|---|---|---|---|---|---|---|---|---|---|---|");
    const paid: Record<number, Measured[]> = {};
    const peer: Record<number, Measured[]> = {};
    for (const [index, clients] of levels.entries()) {
      for (let round = index === 0 ? 0 : 1; round <= rounds; round++) {
        const loom = await measured(() => paidRound(clients));
        const direct = await measured(() => peerRound(clients));
        const n = loom.batch.latenciesMs.length;
        const m = direct.batch.latenciesMs.length;
        console.log(`| ${clients} | ${round === 0 ? "warm-up" : round} | ${perSecond(loom.batch).toFixed(1)} | ${median(loom.batch.latenciesMs).toFixed(1)} | ${percentile(loom.batch.latenciesMs, 0.95).toFixed(1)} | ${unexpected([loom.batch], "202")} | ${perSecond(direct.batch).toFixed(1)} | ${median(direct.batch.latenciesMs).toFixed(1)} | ${percentile(direct.batch.latenciesMs, 0.95).toFixed(1)} | ${(perSecond(loom.batch) / perSecond(direct.batch)).toFixed(2)} | ${(loom.loomCpuSeconds * 1000 / n).toFixed(1)}, ${(loom.chainCpuSeconds * 1000 / n).toFixed(1)} | ${(direct.loomCpuSeconds * 1000 / m).toFixed(1)}, ${(direct.chainCpuSeconds * 1000 / m).toFixed(1)} |`);
        if (unexpected([direct.batch], "success") !== "none") console.log(`|   | peer outcomes other than success: ${unexpected([direct.batch], "success")} |`);
        if (round === 0) continue;
        (paid[clients] ??= []).push(loom);
        (peer[clients] ??= []).push(direct);
      }
    }
    const firstPaid = paid[levels[0]!]![0]!;
    const firstPeer = peer[levels[0]!]![0]!;
    const perRequest = (calls: Record<string, number>, n: number) => Object.entries(calls).sort(([, a], [, b]) => b - a).map(([method, count]) => `${method} ${(count / n).toFixed(2)}`).join(", ");

    // Phases of a paid request, sequential, through the server's own pieces.
    const phases = await paidRequestPhases(server, settings, chain, requirements, searchUrl, phaseSamples);

    // The 402 round trip against a free poll, rounds interleaved.
    if (someRunId === undefined) throw new Error("no paid request succeeded: nothing to poll");
    console.log("\n| clients | round | 402 req/s | p50 ms | p95 ms | poll req/s | p50 ms | p95 ms |");
    console.log("|---|---|---|---|---|---|---|---|");
    const challenges: Record<number, Batch[]> = {};
    const polls: Record<number, Batch[]> = {};
    for (const [index, clients] of levels.entries()) {
      for (let round = index === 0 ? 0 : 1; round <= rounds; round++) {
        const challenge = await challengeRound(clients);
        const poll = await pollRound(clients);
        console.log(`| ${clients} | ${round === 0 ? "warm-up" : round} | ${perSecond(challenge).toFixed(0)} | ${median(challenge.latenciesMs).toFixed(2)} | ${percentile(challenge.latenciesMs, 0.95).toFixed(2)} | ${perSecond(poll).toFixed(0)} | ${median(poll.latenciesMs).toFixed(2)} | ${percentile(poll.latenciesMs, 0.95).toFixed(2)} |`);
        if (round === 0) continue;
        (challenges[clients] ??= []).push(challenge);
        (polls[clients] ??= []).push(poll);
      }
    }

    // The README block.
    const all = (batches: Batch[]) => batches.flatMap((batch) => batch.latenciesMs);
    console.log(`\n---- README block ----\n\n\`${command}\`\n`);
    console.log(`| clients | loom paid req/s, median (min to max) over ${rounds} rounds | p50 / p95 ms | non-202 | peer transfers/s (one relayer, straight to the chain) | p50 / p95 ms | loom / peer, median (min to max) |`);
    console.log("|---|---|---|---|---|---|---|");
    for (const clients of levels) {
      const loomBatches = paid[clients]!.map((entry) => entry.batch);
      const peerBatches = peer[clients]!.map((entry) => entry.batch);
      const ratios = loomBatches.map((batch, round) => perSecond(batch) / perSecond(peerBatches[round]!));
      console.log(`| ${clients} | ${spread(loomBatches.map(perSecond))} | ${median(all(loomBatches)).toFixed(0)} / ${percentile(all(loomBatches), 0.95).toFixed(0)} | ${unexpected(loomBatches, "202")} | ${spread(peerBatches.map(perSecond))} | ${median(all(peerBatches)).toFixed(0)} / ${percentile(all(peerBatches), 0.95).toFixed(0)} | ${spread(ratios, 2)} |`);
    }
    const n = firstPaid.batch.latenciesMs.length;
    const m = firstPeer.batch.latenciesMs.length;
    console.log(`\nJSON-RPC calls per paid request (${levels[0]} client(s), round 1): ${perRequest(firstPaid.rpcCalls, n)}; per peer transfer: ${perRequest(firstPeer.rpcCalls, m)}`);
    const cpuLine = (clients: number) => {
      const loomRuns = paid[clients]!;
      const peerRuns = peer[clients]!;
      const per = (runs: Measured[], pick: (entry: Measured) => number) => median(runs.map((entry) => (pick(entry) * 1000) / entry.batch.latenciesMs.length)).toFixed(1);
      const busy = (runs: Measured[], pick: (entry: Measured) => number) => median(runs.map((entry) => (100 * pick(entry)) / entry.batch.seconds)).toFixed(0);
      return `${clients} clients: paid ${per(loomRuns, (e) => e.loomCpuSeconds)} ms in loom's process (${busy(loomRuns, (e) => e.loomCpuSeconds)}% of a core) + ${per(loomRuns, (e) => e.chainCpuSeconds)} ms in the chain's (${busy(loomRuns, (e) => e.chainCpuSeconds)}%); peer ${per(peerRuns, (e) => e.loomCpuSeconds)} ms + ${per(peerRuns, (e) => e.chainCpuSeconds)} ms (${busy(peerRuns, (e) => e.loomCpuSeconds)}%, ${busy(peerRuns, (e) => e.chainCpuSeconds)}%)`;
    };
    console.log(`CPU per request, median over rounds: ${levels.map(cpuLine).join("; ")}`);

    console.log(`\nOne paid request's phases, median of ${phaseSamples} sequential purchases through the server's own PaymentGate and Checkout (ms):\n`);
    console.log("| 402 challenge (built per unpaid request) | decode + checks against the offer | facilitator verify | journal: reserve | settle on chain (submit + receipt) | journal: settlement + run (one transaction) | checkout total | HTTP p50 at 1 client |");
    console.log("|---|---|---|---|---|---|---|---|");
    console.log(`| ${phases.challenge.toFixed(2)} | ${phases.decode.toFixed(2)} | ${phases.verify.toFixed(1)} | ${phases.reserve.toFixed(1)} | ${phases.settle.toFixed(1)} | ${phases.record.toFixed(1)} | ${phases.buy.toFixed(1)} | ${median(all(paid[levels[0]!]!.map((entry) => entry.batch))).toFixed(1)} |`);

    console.log(`\n| clients | 402 (unpaid POST) req/s, median (min to max) | p50 / p95 ms | free poll req/s | p50 / p95 ms | added latency of the 402, p50 (ms) | 402 p50 / poll p50 | non-402 / non-200 |`);
    console.log("|---|---|---|---|---|---|---|---|");
    for (const clients of levels) {
      const challenge = all(challenges[clients]!);
      const poll = all(polls[clients]!);
      console.log(`| ${clients} | ${spread(challenges[clients]!.map(perSecond), 0)} | ${median(challenge).toFixed(2)} / ${percentile(challenge, 0.95).toFixed(2)} | ${spread(polls[clients]!.map(perSecond), 0)} | ${median(poll).toFixed(2)} / ${percentile(poll, 0.95).toFixed(2)} | ${(median(challenge) - median(poll)).toFixed(2)} | ${(median(challenge) / median(poll)).toFixed(2)}x | ${unexpected(challenges[clients]!, "402")} / ${unexpected(polls[clients]!, "200")} |`);
    }
    const counts = await server.platform.stores.payments.counts();
    console.log(`\npayments journal at the end: ${Object.entries(counts).map(([status, count]) => `${count} ${status}`).join(", ")}`);
    console.log(`load average at the end (1/5/15 min): ${loadavg().map((x) => x.toFixed(2)).join(" / ")}`);
  } finally {
    await server.close();
    await chainProcess.close();
  }
}

function cpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

if (process.argv.includes(CHAIN_CHILD)) await serveChain(Number(process.argv[process.argv.indexOf(CHAIN_CHILD) + 1]));
else await main();
