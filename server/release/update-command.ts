// `loom update`: the operator's side of releases. `check` reads a feed (only when run); `approve` records the
// operator's approval; `apply` and `rollback` move the install between versions (server/release/install/);
// `history` lists the audit records; `migrate` is what apply runs from a new release; `fetch-model` gets a released
// model, verified.
import { hostname, userInfo } from "node:os";
import { createInterface } from "node:readline/promises";
import { parseArgs } from "node:util";
import { UsageError } from "../../engine/cli/arguments.js";
import { PACKAGE_ROOT } from "../../kernels/package-root.js";
import { type Values, databaseLocationOf, executeAdminCommand } from "../cli/admin-command.js";
import { type CheckedServeConfig, readServeConfig } from "../cli/config.js";
import { updateEventLine } from "../platform/admin/admin-text.js";
import type { UpdateApprovalJson, UpdateEventJson } from "../platform/admin/run-admin-command.js";
import { openDatabase } from "../platform/db/open-database.js";
import { LATEST_SCHEMA_VERSION } from "../platform/db/migrate.js";
import type { NewUpdateEvent } from "../platform/store/update-ledger.js";
import { LOOM_VERSION } from "../version.js";
import { type UpdateCheck, checkUpdates, fetchVerifiedRelease, readFeedIndex } from "./check-updates.js";
import { openFeed } from "./feed-source.js";
import { runFetchModel } from "./fetch-model-command.js";
import { readTrustedKeys } from "./keys.js";
import { type UpdateDatabase, type UpdateRecords, UpdateRefusedError, applyUpdate } from "./install/apply-update.js";
import { installedVersion } from "./install/installed-version.js";
import { readInstallState } from "./install/install-state.js";
import { currentRoot, defaultInstallDir, installLayout } from "./install/layout.js";
import { rollbackUpdate } from "./install/rollback-update.js";
import { runningProcesses } from "./install/running-processes.js";
import { readJournal } from "./install/update-journal.js";
import { compareSemVer } from "./semver.js";

export const UPDATE_USAGE = `Usage: loom update <command> [options]

  check                  the releases in the feed newer than the installed version, their notes, and whether each
                         verifies (signature by a key in updates.trustedKeys, package SHA-256); installs nothing;
                         exits 1 when a newer release fails a check
  approve VERSION        verify VERSION in the feed and record the operator's approval of its package (who, when)
    --allow-downgrade    approve a release older than the installed one (refused without it)
  apply [VERSION]        install an approved release (default: the newest approved one newer than the installed
                         version): verify it, unpack it into <install-dir>/releases/VERSION, stop the running loom
                         (it drains: streams and runs finish, up to updates.drainSeconds), back up the embedded
                         database, run the release's migrations, switch <install-dir>/current, start it, and roll
                         back by itself when it is not healthy within updates.healthTimeoutSeconds
    --allow-downgrade    install a release older than the installed one
    --rolling            PostgreSQL deployments: workers one at a time (drain, restart, health), then servers and
                         gateways (the new one starts on the same port before the old one drains)
  rollback               back to the version before the current one, on the current data (only when every
                         migration since keeps it working)
    --restore-data       and put the data back as backed up before the current version's migrations (what was
                         written since is kept aside); asks for confirmation, or --yes
                         after a crash (kill -9) of an apply or rollback, the next one first finishes or undoes it
                         and starts the loom processes it had stopped, healthy, or exits 1 naming what to start
  status                 the installed version, the previous one, the running processes and any update under way
  history [--limit N]    the audit records of checks, approvals, applies and rollbacks, newest first (default 50)
  migrate                bring the platform database to this loom's schema (what apply runs from a new release)
  fetch-model SLUG       a released model, verified (loom update fetch-model --help)

Options:
  --feed FEED            a feed folder, or an https:// URL serving one (http:// only on loopback); default:
                         updates.feed in the config
  --config FILE          the loom config file (updates.trustedKeys, policy, window, installDir, drainSeconds,
                         healthTimeoutSeconds)
  --data-dir DIR         the embedded database (default: as loom admin); apply and rollback back it up
  --database-url URL     PostgreSQL instead (or LOOM_DATABASE_URL)
  --install-dir DIR      where releases are unpacked and current points (default: updates.installDir, else
                         <data-dir>/install); loom serve, gateway and worker given the same folder record themselves
                         there, which is how apply finds what to restart
  --by NAME              who approves or applies, for the records (default: user@host)
  --drain-seconds N, --health-timeout-seconds N   override the config's
  --json                 print one JSON object
`;

const OPTIONS = {
  feed: { type: "string" }, config: { type: "string" }, "data-dir": { type: "string" }, "database-url": { type: "string" }, "install-dir": { type: "string" },
  by: { type: "string" }, "allow-downgrade": { type: "boolean" }, rolling: { type: "boolean" }, "restore-data": { type: "boolean" }, yes: { type: "boolean" },
  limit: { type: "string" }, "drain-seconds": { type: "string" }, "health-timeout-seconds": { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" },
} as const;

/** Which options and how many positionals each command takes. */
const COMMANDS: Record<string, { options: readonly string[]; positionals: 0 | 1 | "0-1" }> = {
  check: { options: ["feed", "config", "data-dir", "database-url", "by", "json"], positionals: 0 },
  approve: { options: ["feed", "config", "data-dir", "database-url", "install-dir", "by", "allow-downgrade", "json"], positionals: 1 },
  apply: { options: ["feed", "config", "data-dir", "database-url", "install-dir", "by", "allow-downgrade", "rolling", "drain-seconds", "health-timeout-seconds", "json"], positionals: "0-1" },
  rollback: { options: ["config", "data-dir", "database-url", "install-dir", "by", "restore-data", "yes", "drain-seconds", "health-timeout-seconds", "json"], positionals: 0 },
  status: { options: ["config", "data-dir", "database-url", "install-dir", "json"], positionals: 0 },
  history: { options: ["config", "data-dir", "database-url", "limit", "json"], positionals: 0 },
  migrate: { options: ["config", "data-dir", "database-url", "json"], positionals: 0 },
};

type Parsed = { values: Values & Record<string, string | boolean | undefined>; positionals: string[] };

/** Runs `loom update ...`. @returns the exit status (check: 1 when a newer release failed verification). */
export async function runUpdate(argv: string[], currentVersion?: string): Promise<number> {
  const [verb, ...rest] = argv;
  if (verb === undefined || verb === "help" || verb === "--help" || verb === "-h") {
    process.stdout.write(UPDATE_USAGE);
    return 0;
  }
  if (verb === "fetch-model") return runFetchModel(rest);
  const spec = COMMANDS[verb];
  if (spec === undefined) throw new UsageError(`unknown update command '${verb}' (${[...Object.keys(COMMANDS), "fetch-model"].join(", ")})\n\n${UPDATE_USAGE}`);
  const parsed = parseArgs({ args: rest, options: OPTIONS, strict: true, allowPositionals: true }) as Parsed;
  if (parsed.values.help) {
    process.stdout.write(UPDATE_USAGE);
    return 0;
  }
  const stray = Object.keys(parsed.values).find((name) => !spec.options.includes(name));
  if (stray !== undefined) throw new UsageError(`'loom update ${verb}' takes no --${stray}`);
  const count = parsed.positionals.length;
  if ((spec.positionals === 0 && count > 0) || (spec.positionals === "0-1" && count > 1)) throw new UsageError(`'loom update ${verb}' takes no argument '${parsed.positionals[spec.positionals === 0 ? 0 : 1]}'`);
  if (spec.positionals === 1 && count !== 1) throw new UsageError(`'loom update ${verb}' takes one VERSION`);
  const json = parsed.values.json === true;
  try {
    switch (verb) {
      case "check":
        return await check(parsed, currentVersion);
      case "approve":
        return await approve(parsed);
      case "apply":
        return await apply(parsed);
      case "rollback":
        return await rollback(parsed);
      case "status":
        return status(parsed);
      case "history":
        return await history(parsed);
      default:
        return await migrateCommand(parsed);
    }
  } catch (error) {
    if (json) process.stdout.write(`${JSON.stringify({ error: (error as Error).message })}\n`);
    throw error;
  }
}

async function check({ values }: Parsed, currentVersion: string | undefined): Promise<number> {
  const config = readServeConfig(values.config as string | undefined);
  const feed = feedOf(values, config);
  const trusted = values.config === undefined ? new Map() : readTrustedKeys(config.updates?.trustedKeys ?? [], values.config as string);
  const version = currentVersion ?? LOOM_VERSION;
  const result = await checkUpdates(feed, version, trusted);
  process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : formatUpdateCheck(result, trusted.size));
  // Recorded where a database is named (a check alone never creates one).
  if (values["data-dir"] !== undefined || "databaseUrl" in databaseOf(values)) {
    const detail = result.releases.map((release) => `${release.version}: ${release.verified ? "verified" : `not verified (${release.problems.join("; ")})`}`).join("; ") || "no newer release";
    // A release that failed verification makes the check a failure in the audit trail too, not "check ok".
    const outcome = result.releases.every((release) => release.verified) ? "ok" : "failed";
    await recordsOf(values).record({ action: "check", outcome, fromVersion: version, toVersion: result.releases[0]?.version ?? null, actor: actorOf(values), detail: `${feed.location}: ${detail}` });
  }
  return result.releases.every((release) => release.verified) ? 0 : 1;
}

async function approve({ values, positionals }: Parsed): Promise<number> {
  const config = readServeConfig(values.config as string | undefined);
  const feed = feedOf(values, config);
  const version = positionals[0]!;
  const actor = actorOf(values);
  const records = recordsOf(values);
  let approval: UpdateApprovalJson;
  try {
    const index = await readFeedIndex(feed);
    const release = index.releases.find((entry) => entry.version === version);
    if (release === undefined) throw new Error(`the feed ${feed.location} has no release ${version}`);
    const verified = await fetchVerifiedRelease(feed, release, trustedKeys(values, config));
    refuseUnaskedDowngrade(version, values, config);
    approval = (await executeAdminCommand({ command: "update.approve", version, packageSha256: verified.manifest.package.sha256, approvedBy: actor }, values)) as UpdateApprovalJson;
  } catch (error) {
    await records.record({ action: "approve", outcome: "refused", fromVersion: null, toVersion: version, actor, detail: (error as Error).message }).catch(() => undefined);
    throw error;
  }
  await records.record({ action: "approve", outcome: "ok", fromVersion: null, toVersion: version, actor, detail: `package SHA-256 ${approval.packageSha256}` });
  process.stdout.write(values.json ? `${JSON.stringify(approval)}\n` : `approved ${version} (package SHA-256 ${approval.packageSha256}) by ${approval.approvedBy} at ${approval.approvedAt}\n`);
  return 0;
}

/**
 * Approving a release older than the installed one needs --allow-downgrade, as applying it does: a mistyped version
 * is caught when it is approved, not when the approval is used. @throws UsageError naming both versions.
 */
function refuseUnaskedDowngrade(version: string, values: Parsed["values"], config: CheckedServeConfig): void {
  if (values["allow-downgrade"] === true) return;
  const installed = installedVersion(currentRoot(layoutOf(values, config)) ?? PACKAGE_ROOT).version;
  if (compareSemVer(version, installed) < 0) {
    throw new UpdateRefusedError(`${version} is older than the installed ${installed}: pass --allow-downgrade to approve an older release (apply needs it too)`);
  }
}

async function apply({ values, positionals }: Parsed): Promise<number> {
  const config = readServeConfig(values.config as string | undefined);
  const result = await applyUpdate({
    layout: layoutOf(values, config),
    feed: feedOf(values, config),
    trusted: trustedKeys(values, config),
    ...(positionals[0] === undefined ? {} : { version: positionals[0] }),
    allowDowngrade: values["allow-downgrade"] === true,
    rolling: values.rolling === true,
    database: databaseOf(values),
    records: recordsOf(values),
    actor: actorOf(values),
    policy: config.updates?.policy ?? "manual",
    ...(config.updates?.window === undefined ? {} : { window: config.updates.window }),
    fallbackRoot: PACKAGE_ROOT,
    ...timingOf(values, config),
  });
  process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : `updated ${result.from.version} -> ${result.to.version}; running: ${result.restarted.join(", ") || "no process was running: start it from the install's current folder"}\n`);
  return 0;
}

async function rollback({ values }: Parsed): Promise<number> {
  const config = readServeConfig(values.config as string | undefined);
  const layout = layoutOf(values, config);
  const restoreData = values["restore-data"] === true;
  if (restoreData && values.yes !== true) await confirmRestore(layout);
  const result = await rollbackUpdate({ layout, database: databaseOf(values), records: recordsOf(values), actor: actorOf(values), restoreData, ...timingOf(values, config) });
  process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : `rolled back ${result.from.version} -> ${result.to.version}${result.replacedData === null ? "" : `; the data it replaced is kept at ${result.replacedData}`}; running: ${result.restarted.join(", ") || "no process was running: start it from the install's current folder"}\n`);
  return 0;
}

function status({ values }: Parsed): number {
  const config = readServeConfig(values.config as string | undefined);
  const layout = layoutOf(values, config);
  const current = currentRoot(layout);
  const report = {
    installDir: layout.root,
    current: current === undefined ? null : installedVersion(current),
    previous: readInstallState(layout)?.previous ?? null,
    processes: runningProcesses(layout).map(({ pid, role, version, url, startedAt }) => ({ pid, role, version, url, startedAt })),
    updateUnderWay: readJournal(layout) ?? null,
  };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(report)}\n`);
    return 0;
  }
  const lines = [
    `install ${report.installDir}: current ${report.current === null ? "none yet (no release applied)" : `${report.current.version} (${report.current.root})`}; previous ${report.previous?.version ?? "none"}`,
    ...report.processes.map((process_) => `  ${process_.role} ${process_.pid}  ${process_.version}  ${process_.url}  since ${process_.startedAt}`),
    ...(report.updateUnderWay === null ? [] : [`  an ${report.updateUnderWay.operation} from ${report.updateUnderWay.from.version} to ${report.updateUnderWay.to.version} is under way or was cut off (${report.updateUnderWay.phase}); the next loom update or loom serve finishes it`]),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

async function history({ values }: Parsed): Promise<number> {
  readServeConfig(values.config as string | undefined); // checked like its siblings', though history needs none of it
  const limit = values.limit === undefined ? 50 : Number(values.limit);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) throw new UsageError(`--limit must be an integer from 1 to 1000, got '${values.limit}'`);
  const { events } = (await executeAdminCommand({ command: "update.history", limit }, values)) as { events: UpdateEventJson[] };
  process.stdout.write(values.json ? `${JSON.stringify({ events })}\n` : events.length === 0 ? "no update records\n" : events.map((event) => `${updateEventLine(event)}\n`).join(""));
  return 0;
}

async function migrateCommand({ values }: Parsed): Promise<number> {
  readServeConfig(values.config as string | undefined); // checked like its siblings', though migrate needs none of it
  const database = databaseOf(values);
  let applied: number[] = [];
  const opened = await openDatabase("dataDir" in database ? { dataDir: database.dataDir } : { url: database.databaseUrl, poolSize: 1 }, (versions) => { applied = versions; });
  await opened.close();
  process.stdout.write(values.json ? `${JSON.stringify({ applied, schemaVersion: LATEST_SCHEMA_VERSION })}\n` : `schema version ${LATEST_SCHEMA_VERSION}; applied ${applied.join(", ") || "nothing (already there)"}\n`);
  return 0;
}

/** The check as text: one block per newer release, newest first. */
export function formatUpdateCheck(result: UpdateCheck, trustedKeys: number): string {
  const count = result.releases.length;
  const lines = [`loom ${result.currentVersion}; feed ${result.feed}: ${count === 0 ? "no newer release" : `${count} newer release${count === 1 ? "" : "s"}`}${trustedKeys === 0 ? " (no trusted keys configured: nothing can verify)" : ""}`];
  for (const release of result.releases) {
    const status = release.verified ? `verified: signed by key ${release.signedBy}, package SHA-256 matches, needs schema version ${release.schemaVersion}` : "NOT VERIFIED";
    lines.push("", `${release.version}  ${release.date}  ${status}`);
    for (const problem of release.problems) lines.push(`  problem: ${problem}`);
    const notes = release.notes.trim();
    if (notes !== "") lines.push(...notes.split("\n").map((line) => `  | ${line}`));
  }
  return `${lines.join("\n")}\n`;
}

function feedOf(values: Parsed["values"], config: CheckedServeConfig) {
  const location = (values.feed as string | undefined) ?? config.updates?.feed;
  if (location === undefined) throw new UsageError("--feed is required (or updates.feed in the --config file)");
  return openFeed(location);
}

function trustedKeys(values: Parsed["values"], config: CheckedServeConfig) {
  if (values.config === undefined || (config.updates?.trustedKeys ?? []).length === 0) throw new UsageError("no trusted release keys: give --config with updates.trustedKeys (the .pub.pem files of the keys releases are signed with)");
  return readTrustedKeys(config.updates!.trustedKeys!, values.config as string);
}

/** Where the platform's data is, named as loom admin names it. */
function databaseOf(values: Parsed["values"]): UpdateDatabase {
  const location = databaseLocationOf(values);
  return "url" in location ? { databaseUrl: location.url } : location;
}

function layoutOf(values: Parsed["values"], config: CheckedServeConfig) {
  const database = databaseOf(values);
  return installLayout((values["install-dir"] as string | undefined) ?? config.updates?.installDir ?? defaultInstallDir("dataDir" in database ? database.dataDir : undefined));
}

function actorOf(values: Parsed["values"]): string {
  return (values.by as string | undefined) ?? `${userInfo().username}@${hostname()}`;
}

function timingOf(values: Parsed["values"], config: CheckedServeConfig) {
  const seconds = (flag: string, configured: number | undefined, fallback: number, minimum: number) => {
    const given = values[flag] as string | undefined;
    const value = given === undefined ? (configured ?? fallback) : Number(given);
    if (!Number.isSafeInteger(value) || value < minimum || value > 3600) throw new UsageError(`--${flag} must be an integer from ${minimum} to 3600, got '${given}'`);
    return value * 1000;
  };
  return {
    drainMs: seconds("drain-seconds", config.updates?.drainSeconds, 30, 0),
    healthMs: seconds("health-timeout-seconds", config.updates?.healthTimeoutSeconds, 120, 1),
    onProgress: (line: string) => process.stderr.write(`loom update: ${line}\n`),
  };
}

/** The update records through the database or the server holding it; one open per call. */
function recordsOf(values: Parsed["values"]): UpdateRecords {
  return {
    async approval(version, packageSha256) {
      const { approvals } = (await executeAdminCommand({ command: "update.approvals" }, values)) as { approvals: UpdateApprovalJson[] };
      return approvals.find((approval) => approval.version === version && approval.packageSha256 === packageSha256);
    },
    async record(event: NewUpdateEvent) {
      await executeAdminCommand({ command: "update.record", event }, values);
    },
    async history(limit) {
      return ((await executeAdminCommand({ command: "update.history", limit }, values)) as { events: UpdateEventJson[] }).events;
    },
  };
}

/** Asks the operator to type the version being left before its data is replaced. @throws UsageError without a yes. */
async function confirmRestore(layout: ReturnType<typeof installLayout>): Promise<void> {
  const state = readInstallState(layout);
  const what = state === undefined ? "the data backup" : `the data as backed up before ${state.current.version} was applied (${state.backup ?? "no backup recorded"})`;
  if (!process.stdin.isTTY) throw new UsageError(`--restore-data replaces the database with ${what}; what was written since is kept aside but no longer served: add --yes to confirm`);
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await prompt.question(`Replace the database with ${what}? Type "restore" to confirm: `);
    if (answer.trim() !== "restore") throw new UsageError("not confirmed: nothing was changed");
  } finally {
    prompt.close();
  }
}

