// Headless Chromium for the dashboard's browser tests and its page-load benchmark: Debian's `chromium` (installed by
// scripts/ci/chromium.sh) driven by playwright-core, which downloads nothing. Missing Chromium skips the tests
// outside CI and fails them under CI=true (the fixtures' rule), so a machine without it still runs the rest.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { type Browser, type Page, chromium } from "playwright-core";
import { REPOSITORY_ROOT } from "../../engine/testing/fixtures.js";

/** Where Chromium is: `LOOM_CHROMIUM`, else Debian's binary (the /usr/bin/chromium wrapper execs it). */
export const CHROMIUM_PATH = process.env.LOOM_CHROMIUM ?? ["/usr/lib/chromium/chromium", "/usr/bin/chromium"].find((path) => existsSync(path)) ?? "/usr/bin/chromium";

/** Why the browser tests cannot run here, or undefined when they can. */
export const chromiumMissing: string | undefined = existsSync(CHROMIUM_PATH) ? undefined : `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set LOOM_CHROMIUM)`;

/** Where tests write screenshots (gitignored; CI keeps it as an artifact). */
export const ARTIFACTS_DIR = join(REPOSITORY_ROOT, "test-artifacts");

/** Starts headless Chromium. `--no-sandbox`: CI runs as root, where Chromium's sandbox refuses to start. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ["--no-sandbox"], timeout: 60_000 });
}

/** The desktop and phone viewports the dashboard is checked and photographed at. */
export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

/** One axe-core finding, as much as a failure message needs. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

let axeSource: string | undefined;

/**
 * Runs axe-core on the page as it is now and returns its serious and critical violations. The source is evaluated
 * through the DevTools protocol, which the page's Content-Security-Policy does not govern, so the check runs against
 * the dashboard exactly as served.
 */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }> }> } }).axe;
    // The whole document (named through globalThis: this file compiles without the DOM's types).
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ["violations"] });
    return result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, help: violation.help, targets: violation.nodes.slice(0, 5).map((node) => node.target.map(String).join(" ")) }));
  });
  return violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
}

/** Saves a full-page screenshot as test-artifacts/<folder>/<name>.png and returns its path. */
export async function saveScreenshot(page: Page, folder: string, name: string): Promise<string> {
  const directory = join(ARTIFACTS_DIR, folder);
  mkdirSync(directory, { recursive: true });
  const path = join(directory, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
