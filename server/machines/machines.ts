// The machine endpoints assembled on a platform with agent runs: the payment gate on the configured facilitator, the
// payments journal, checkout, the reconciler that finishes payments a crash left unfinished, and the routes. Without
// a payment configuration the routes still answer, with 503 saying the endpoints are off.
import type { ServerContext } from "../http/context.js";
import { logFailure } from "../http/log.js";
import type { Surface } from "../http/routes.js";
import type { Platform } from "../platform/platform.js";
import type { Runs } from "../runs/runs.js";
import { ChainState } from "./chain-state.js";
import { Checkout } from "./checkout.js";
import { openFacilitator } from "./facilitator.js";
import { PaymentGate } from "./payment-gate.js";
import { PaymentStore } from "./payment-store.js";
import type { PaymentsSettings } from "./payments-config.js";
import { machinesSurface } from "./routes.js";

/** The machine endpoints on one server. */
export interface Machines {
  readonly surface: (context: ServerContext) => Surface;
  /** Stops the reconciler, after a pass under way. */
  close(): Promise<void>;
}

/** Options of the machine endpoints. */
export interface MachinesOptions {
  /** How often unfinished payments are looked for (default: a quarter of the settlement timeout, 1 to 30 s). */
  reconcileEveryMs?: number;
  /** Where reconciliation failures are reported (default: stderr). */
  onError?: (error: unknown) => void;
}

/** Opens the machine endpoints; `settings` undefined: off (503). Reconciliation starts at once. */
export function openMachines(platform: Platform, runs: Runs, settings: PaymentsSettings | undefined, options: MachinesOptions = {}): Machines {
  const services = { store: runs.store, engines: runs.engines, serves: (slug: string | undefined) => runs.serves(slug) };
  if (!settings) {
    return { surface: machinesSurface(services), close: async () => {} };
  }
  const gate = new PaymentGate(settings, openFacilitator(settings.settlement, settings.network));
  const chain = new ChainState(settings.settlement.rpcUrl, settings.asset.address);
  const checkout = new Checkout(gate, new PaymentStore(platform.database), chain, {
    network: settings.network.caip2,
    asset: settings.asset.address,
    settlementTimeoutMs: settings.settlement.timeoutMs,
    runCreated: () => runs.worker.notify(),
  });
  const onError = options.onError ?? ((error: unknown) => logFailure("payments reconciliation", error));
  let running: Promise<void> | undefined;
  const reconcile = () => {
    // One pass at a time (a tick during a pass joins it); a pass goes on while batches finish payments.
    running ??= (async () => {
      while ((await checkout.reconcile()) > 0);
    })().finally(() => {
      running = undefined;
    });
    return running;
  };
  const every = options.reconcileEveryMs ?? Math.min(30_000, Math.max(1000, Math.floor(settings.settlement.timeoutMs / 4)));
  const timer = setInterval(() => void reconcile().catch(onError), every);
  timer.unref();
  void reconcile().catch(onError);
  return {
    surface: machinesSurface({ ...services, payments: { settings, gate, checkout } }),
    async close() {
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
