// `loom update`: the operator's side. `check` reads a feed (only when run) and lists the newer releases with their
// verification; installing them (approve, apply, rollback) is not built yet.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { UsageError } from "../../engine/cli/arguments.js";
import { PACKAGE_ROOT } from "../../kernels/package-root.js";
import { readServeConfig } from "../cli/config.js";
import { type UpdateCheck, checkUpdates } from "./check-updates.js";
import { openFeed } from "./feed-source.js";
import { readTrustedKeys } from "./keys.js";

export const UPDATE_USAGE = `Usage: loom update check --feed FEED [--config FILE] [--json]

  Lists the releases in FEED newer than this loom, with their notes, whether each manifest's signature verifies
  against a trusted key (updates.trustedKeys in the config file: PEM text or paths to .pub.pem files) and whether
  each package matches its manifest's SHA-256. Installs nothing. Exits 1 when a newer release fails a check.

  --feed FEED     a feed folder, or an https:// URL serving one (http:// only for 127.0.0.1, localhost, [::1]);
                  default: updates.feed in the config file
  --config FILE   the loom config file (as for loom serve)
  --json          print one JSON object: { feed, currentVersion, releases: [{ version, date, notes, signedBy,
                  packageMatches, schemaVersion, verified, problems }] }
`;

const OPTIONS = { feed: { type: "string" }, config: { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } } as const;

/** Runs `loom update ...`. @returns the exit status: 1 when a newer release failed verification. */
export async function runUpdate(argv: string[], currentVersion = runningVersion()): Promise<number> {
  const [verb, ...rest] = argv;
  if (verb === undefined || verb === "help" || verb === "--help" || verb === "-h") {
    process.stdout.write(UPDATE_USAGE);
    return 0;
  }
  if (verb !== "check") throw new UsageError(`unknown update command '${verb}' (only 'check' exists yet)\n\n${UPDATE_USAGE}`);
  const { values, positionals } = parseArgs({ args: rest, options: OPTIONS, strict: true, allowPositionals: true });
  if (values.help) {
    process.stdout.write(UPDATE_USAGE);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`'loom update check' takes no argument '${positionals[0]}'`);
  try {
    const config = readServeConfig(values.config);
    const feedLocation = values.feed ?? config.updates?.feed;
    if (feedLocation === undefined) throw new UsageError("--feed is required (or updates.feed in the --config file)");
    const trusted = values.config === undefined ? new Map() : readTrustedKeys(config.updates?.trustedKeys ?? [], values.config);
    const result = await checkUpdates(openFeed(feedLocation), currentVersion, trusted);
    process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : formatUpdateCheck(result, trusted.size));
    return result.releases.every((release) => release.verified) ? 0 : 1;
  } catch (error) {
    if (values.json) process.stdout.write(`${JSON.stringify({ error: (error as Error).message })}\n`);
    throw error;
  }
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

/** This loom's version, from its package.json. */
function runningVersion(): string {
  return (JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string }).version;
}
