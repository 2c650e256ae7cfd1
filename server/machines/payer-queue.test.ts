// Payer queues on their own: one place per payer at a time in arrival order, payers independent of each other, a cap
// on the places one payer holds, and a place given up out of order never letting a later one start early.
import { describe, expect, it } from "vitest";
import { PayerQueues } from "./payer-queue.js";

/** Whether `promise` has settled by the time pending callbacks have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setTimeout(resolve, 5));
  return done;
}

describe("PayerQueues", () => {
  it("gives one payer's places their turns in order, and another payer's at once", async () => {
    const queues = new PayerQueues(8);
    const first = queues.enter("0xAbC")!;
    const second = queues.enter("0xabc")!; // any case: the same payer
    const other = queues.enter("0xdef")!;
    expect([first.ahead, second.ahead, other.ahead]).toEqual([0, 1, 0]);
    expect([await settled(first.turn), await settled(second.turn), await settled(other.turn)]).toEqual([true, false, true]);
    first.leave();
    expect(await settled(second.turn)).toBe(true);
    expect(queues.busy("0xABC")).toBe(true);
    second.leave();
    second.leave(); // idempotent: the count is not taken twice
    other.leave();
    expect([queues.busy("0xabc"), queues.busy("0xdef")]).toEqual([false, false]);
  });

  it("counts a place left twice once: the cap still counts the places that remain", () => {
    const queues = new PayerQueues(3);
    const [first, second] = [queues.enter("0xabc")!, queues.enter("0xabc")!];
    queues.enter("0xabc");
    second.leave();
    second.leave();
    expect(queues.enter("0xabc")).toMatchObject({ ahead: 2 });
    expect(queues.enter("0xabc")).toBeUndefined();
    first.leave();
    expect(queues.busy("0xabc")).toBe(true);
  });

  it("refuses a place past the cap, and has one again once a place is left", () => {
    const queues = new PayerQueues(2);
    const places = [queues.enter("0xabc"), queues.enter("0xabc")];
    expect(queues.enter("0xabc")).toBeUndefined();
    expect(queues.enter("0xdef")).toBeDefined(); // per payer
    places[0]!.leave();
    expect(queues.enter("0xabc")).toMatchObject({ ahead: 1 });
  });

  it("keeps a later place waiting for every place ahead, even when one in between leaves first", async () => {
    const queues = new PayerQueues(8);
    const [first, second, third] = [queues.enter("0xabc")!, queues.enter("0xabc")!, queues.enter("0xabc")!];
    second.leave(); // a retry that gave its place up before its turn
    expect(await settled(third.turn)).toBe(false);
    first.leave();
    expect(await settled(third.turn)).toBe(true);
    third.leave();
    expect(queues.busy("0xabc")).toBe(false);
  });
});
