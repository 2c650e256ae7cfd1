// The operator's update policy (the config's `updates.policy`): `manual` (the default: a release is applied when the
// operator runs `loom update apply` and has approved it), `window` (approved releases are applied only inside the
// maintenance window, by `loom update apply` run from a timer), `pinned` (nothing is applied).

/** The policies. */
export const UPDATE_POLICIES = ["manual", "window", "pinned"] as const;
export type UpdatePolicy = (typeof UPDATE_POLICIES)[number];

/** Days of the week as the window names them (UTC). */
export const WEEKDAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** A weekly maintenance window in UTC: from `start` to `end` ("HH:MM") on `days` (default every day); an end
 * before the start runs past midnight into the next day. */
export interface MaintenanceWindow {
  days?: Weekday[];
  start: string;
  end: string;
}

const CLOCK = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** Why `window` is not a window, or undefined when it is one (for the config's checks). */
export function windowProblem(window: unknown): string | undefined {
  const w = window as Partial<MaintenanceWindow> | null;
  if (typeof w !== "object" || w === null || Array.isArray(w)) return 'an object { "days": ["sat", "sun"], "start": "02:00", "end": "04:00" } (UTC)';
  const unknown = Object.keys(w).find((key) => !["days", "start", "end"].includes(key));
  if (unknown !== undefined) return `an object of days, start and end (not ${unknown})`;
  if (typeof w.start !== "string" || !CLOCK.test(w.start)) return 'an object whose start is "HH:MM" (UTC)';
  if (typeof w.end !== "string" || !CLOCK.test(w.end)) return 'an object whose end is "HH:MM" (UTC)';
  if (w.start === w.end) return "an object whose start and end differ";
  if (w.days !== undefined && (!Array.isArray(w.days) || w.days.length === 0 || !w.days.every((day) => (WEEKDAYS as readonly string[]).includes(day)))) {
    return `an object whose days are some of ${WEEKDAYS.join(", ")}`;
  }
  return undefined;
}

/** Whether `at` falls inside the window (a window past midnight belongs to the day it starts on). */
export function insideWindow(window: MaintenanceWindow, at: Date): boolean {
  const minutes = (clock: string) => Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3));
  const start = minutes(window.start);
  const end = minutes(window.end);
  const now = at.getUTCHours() * 60 + at.getUTCMinutes();
  const days = new Set<string>(window.days ?? WEEKDAYS);
  const today = WEEKDAYS[at.getUTCDay()]!;
  const yesterday = WEEKDAYS[(at.getUTCDay() + 6) % 7]!;
  if (start < end) return days.has(today) && now >= start && now < end;
  return (days.has(today) && now >= start) || (days.has(yesterday) && now < end);
}

/**
 * Why the policy refuses to apply a release now, or undefined when it allows it (approval is checked apart).
 */
export function policyRefusal(policy: UpdatePolicy, window: MaintenanceWindow | undefined, at: Date): string | undefined {
  if (policy === "pinned") return 'the update policy is "pinned" (updates.policy in the config): no release is applied; set it to "manual" or "window" to update';
  if (policy === "window") {
    if (window === undefined) return 'the update policy is "window" but the config has no updates.window';
    if (!insideWindow(window, at)) return `outside the maintenance window (${(window.days ?? WEEKDAYS).join(", ")} ${window.start}-${window.end} UTC; now ${at.toISOString()}): approved releases are applied inside it`;
  }
  return undefined;
}
