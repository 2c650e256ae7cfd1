// The update policy: when the maintenance window is open (UTC, across midnight) and what each policy refuses.
import { describe, expect, it } from "vitest";
import { insideWindow, policyRefusal, windowProblem } from "./update-policy.js";

describe("the update policy", () => {
  it("opens a window on its days between start and end, and one past midnight on the day it starts", () => {
    const weekend = { days: ["sat", "sun"] as ("sat" | "sun")[], start: "02:00", end: "04:00" };
    expect(insideWindow(weekend, new Date("2026-11-28T02:00:00Z"))).toBe(true); // a Saturday
    expect(insideWindow(weekend, new Date("2026-11-28T04:00:00Z"))).toBe(false);
    expect(insideWindow(weekend, new Date("2026-11-27T03:00:00Z"))).toBe(false); // a Friday
    const night = { days: ["fri"] as "fri"[], start: "23:00", end: "01:00" };
    expect(insideWindow(night, new Date("2026-11-27T23:30:00Z"))).toBe(true);
    expect(insideWindow(night, new Date("2026-11-28T00:30:00Z"))).toBe(true); // Saturday morning, Friday's window
    expect(insideWindow(night, new Date("2026-11-28T23:30:00Z"))).toBe(false);
    expect(insideWindow({ start: "10:00", end: "11:00" }, new Date("2026-11-25T10:59:00Z"))).toBe(true); // every day
  });

  it("refuses everything when pinned, outside the window when window, and nothing when manual", () => {
    const at = new Date("2026-11-27T12:00:00Z");
    expect(policyRefusal("manual", undefined, at)).toBeUndefined();
    expect(policyRefusal("pinned", undefined, at)).toContain('the update policy is "pinned"');
    expect(policyRefusal("window", { start: "02:00", end: "04:00" }, at)).toContain("outside the maintenance window (sun, mon, tue, wed, thu, fri, sat 02:00-04:00 UTC; now 2026-11-27T12:00:00.000Z)");
    expect(policyRefusal("window", { start: "11:00", end: "13:00" }, at)).toBeUndefined();
    expect(policyRefusal("window", undefined, at)).toContain("no updates.window");
  });

  it.each([
    [{ start: "2:00", end: "04:00" }, 'start is "HH:MM"'],
    [{ start: "02:00", end: "24:00" }, 'end is "HH:MM"'],
    [{ start: "02:00", end: "02:00" }, "start and end differ"],
    [{ start: "02:00", end: "04:00", days: ["someday"] }, "days are some of"],
    [{ start: "02:00", end: "04:00", zone: "CET" }, "not zone"],
    ["02:00-04:00", "an object"],
  ])("refuses the window %j", (window, message) => {
    expect(windowProblem(window)).toContain(message);
  });
});
