// `loom update fetch-model`: the operator's (or a worker host's) side of model releases: fetches one model file
// from a feed into a models folder, verified against the config's trusted keys, and prints where it is.
import { parseArgs } from "node:util";
import { UsageError } from "../../engine/cli/arguments.js";
import { readServeConfig } from "../cli/config.js";
import { openFeed } from "./feed-source.js";
import { type FetchedModel, fetchModel } from "./fetch-model.js";
import { readTrustedKeys } from "./keys.js";

export const FETCH_MODEL_USAGE = `Usage: loom update fetch-model SLUG --feed FEED --config FILE --models-dir DIR [--sha256 HEX] [--json]

  Fetches the newest release of model SLUG from FEED into DIR under the file name its signed manifest gives, once
  the manifest's signature verifies against a trusted key (updates.trustedKeys in the config file) and the file's
  size and SHA-256 match the manifest. The file streams to DIR/<name>.partial and is renamed into place only when it
  matches; a file already in DIR with the right SHA-256 is not downloaded again. Prints the verified file's path.

  --feed FEED        a feed folder, or an https:// URL serving one (http:// only for 127.0.0.1, localhost, [::1]);
                     default: updates.feed in the config file
  --config FILE      the loom config file (as for loom serve), with updates.trustedKeys
  --models-dir DIR   the folder the model file is put in (created if missing)
  --sha256 HEX       the release of SLUG whose file has this SHA-256, instead of the newest
  --json             print one JSON object: { slug, path, size, sha256, date, notes, signedBy, downloaded }
`;

const OPTIONS = {
  feed: { type: "string" }, config: { type: "string" }, "models-dir": { type: "string" }, sha256: { type: "string" },
  json: { type: "boolean" }, help: { type: "boolean", short: "h" },
} as const;

/**
 * Runs `loom update fetch-model ...` (`argv`: what follows `fetch-model`). @returns the exit status, 0 once the
 * file is in place and verified. @throws UsageError for a mistake in the arguments, Error naming what failed to
 * verify (with --json, also printed as `{ error }`).
 */
export async function runFetchModel(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: true });
  if (values.help) {
    process.stdout.write(FETCH_MODEL_USAGE);
    return 0;
  }
  try {
    if (positionals.length !== 1) throw new UsageError(`'loom update fetch-model' takes one model slug, got ${positionals.length === 0 ? "none" : positionals.join(" ")}`);
    const config = readServeConfig(values.config);
    const feedLocation = values.feed ?? config.updates?.feed;
    if (feedLocation === undefined) throw new UsageError("--feed is required (or updates.feed in the --config file)");
    const destinationDir = values["models-dir"];
    if (destinationDir === undefined) throw new UsageError("--models-dir is required");
    // Without a trusted key nothing can verify: said plainly instead of as an unknown signer.
    const trusted = values.config === undefined ? new Map() : readTrustedKeys(config.updates?.trustedKeys ?? [], values.config);
    if (trusted.size === 0) throw new UsageError("no trusted keys: give --config with updates.trustedKeys (the public keys whose signatures a model must carry)");
    const fetched = await fetchModel({ feed: openFeed(feedLocation), slug: positionals[0]!, trusted, destinationDir, sha256: values.sha256 });
    process.stdout.write(values.json ? `${JSON.stringify(fetched)}\n` : formatFetchedModel(fetched, feedLocation));
    return 0;
  } catch (error) {
    if (values.json) process.stdout.write(`${JSON.stringify({ error: (error as Error).message })}\n`);
    throw error;
  }
}

/** The fetch as text: the verified path first, then what verified it. */
export function formatFetchedModel(fetched: FetchedModel, feed: string): string {
  return (
    `${fetched.downloaded ? `fetched model ${fetched.slug} from ${feed}` : `model ${fetched.slug} already in place`}: ${fetched.path}\n` +
    `  verified   ${fetched.size} bytes, sha256 ${fetched.sha256}\n` +
    `  signed by  key ${fetched.signedBy}, released ${fetched.date}\n`
  );
}
