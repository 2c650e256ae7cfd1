// `loom release`: the publisher's side, making signing keys and building signed releases of loom and of models into
// a feed folder.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { UsageError } from "../../engine/cli/arguments.js";
import { PACKAGE_ROOT } from "../../kernels/package-root.js";
import { type BuildModelReleaseOptions, buildModelRelease } from "./build-model-release.js";
import { buildRelease } from "./build-release.js";
import { writeKeyPair } from "./keys.js";

export const RELEASE_USAGE = `Usage: loom release <command> [options]

Commands:
  keygen --out DIR          make an Ed25519 signing key pair: DIR/release-key.pem (private, mode 0600) and
                            DIR/release-key.pub.pem (give it to the servers that trust your releases:
                            updates.trustedKeys in their config); prints the key id
  build --key KEY --out FEED [--notes FILE] [--replace] [--package-root DIR]
                            pack this loom's package (npm pack: package.json "files") and add it to the feed
                            folder FEED, with a manifest (every file's SHA-256, git commit, schema version and
                            migrations, notes) signed by KEY; a version the feed has is refused without --replace.
                            --package-root: the package to release (default: this loom's own folder)
  model --key KEY --out FEED --slug SLUG --file PATH [--notes FILE] [--replace]
                            copy one GGUF model file into the feed folder FEED as
                            models/SLUG/<first 16 hex of its SHA-256>/<file name>, with a manifest (slug, file
                            name, size, SHA-256, notes) signed by KEY; the same slug with the same file is refused
                            without --replace. SLUG: lower-case letters, digits, ".", "_", "-". Hugging Face model
                            directories are not released: one file only

Options:
  --json                    print one JSON object
`;

const OPTIONS = {
  out: { type: "string" }, key: { type: "string" }, notes: { type: "string" }, replace: { type: "boolean" },
  "package-root": { type: "string" }, slug: { type: "string" }, file: { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" },
} as const;

/** Runs `loom release ...`. @throws UsageError for a mistake in the arguments, Error naming the file at fault. */
export async function runRelease(argv: string[]): Promise<void> {
  const [verb, ...rest] = argv;
  if (verb === undefined || verb === "help" || verb === "--help" || verb === "-h") {
    process.stdout.write(RELEASE_USAGE);
    return;
  }
  if (verb !== "keygen" && verb !== "build" && verb !== "model") throw new UsageError(`unknown release command '${verb}'\n\n${RELEASE_USAGE}`);
  const { values, positionals } = parseArgs({ args: rest, options: OPTIONS, strict: true, allowPositionals: true });
  if (values.help) {
    process.stdout.write(RELEASE_USAGE);
    return;
  }
  if (positionals.length > 0) throw new UsageError(`'loom release ${verb}' takes no argument '${positionals[0]}'`);
  const out = values.out;
  if (out === undefined) throw new UsageError(`--out is required`);
  if (verb === "keygen") {
    const keys = writeKeyPair(out);
    process.stdout.write(values.json ? `${JSON.stringify(keys)}\n` : `key id       ${keys.keyId}\nprivate key  ${keys.privateKeyPath} (mode 0600: keep it secret)\npublic key   ${keys.publicKeyPath}\n`);
    return;
  }
  if (values.key === undefined) throw new UsageError(`--key is required`);
  let notes = "";
  if (values.notes !== undefined) {
    try {
      notes = readFileSync(values.notes, "utf8");
    } catch (error) {
      throw new Error(`--notes ${values.notes}: ${(error as Error).message}`);
    }
  }
  if (verb === "model") {
    if (values.slug === undefined) throw new UsageError(`--slug is required`);
    if (values.file === undefined) throw new UsageError(`--file is required`);
    return releaseModel({ keyPath: values.key, feed: out, slug: values.slug, file: values.file, notes, replace: values.replace ?? false }, values.json ?? false);
  }
  const built = await buildRelease({ packageRoot: values["package-root"] ?? PACKAGE_ROOT, keyPath: values.key, feed: out, notes, replace: values.replace ?? false });
  const { manifest } = built;
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ version: built.version, keyId: built.keyId, folder: built.folder, files: built.release.files, package: manifest.package, fileCount: manifest.files.length, schemaVersion: manifest.schema.version, git: manifest.git })}\n`);
    return;
  }
  process.stdout.write(
    `built ${manifest.name} ${built.version} into ${built.folder}\n` +
      `  package    ${manifest.package.file} (${manifest.package.size} bytes, sha256 ${manifest.package.sha256})\n` +
      `  files      ${manifest.files.length}\n` +
      `  schema     version ${manifest.schema.version} (${manifest.schema.migrations.length} migrations)\n` +
      `  git        ${manifest.git === null ? "not a git checkout" : `${manifest.git.commit}${manifest.git.dirty ? " (with uncommitted changes)" : ""}`}\n` +
      `  signed by  key ${built.keyId}\n`,
  );
}

/** `loom release model`: the release, then what was written, as text or one JSON object. */
async function releaseModel(options: BuildModelReleaseOptions, json: boolean): Promise<void> {
  const built = await buildModelRelease(options);
  const { manifest, slug } = built;
  if (json) {
    process.stdout.write(`${JSON.stringify({ slug, keyId: built.keyId, folder: built.folder, date: manifest.date, file: manifest.file, files: built.entry.files })}\n`);
    return;
  }
  process.stdout.write(
    `released model ${slug} into ${built.folder}\n` +
      `  file       ${manifest.file.name} (${manifest.file.size} bytes, sha256 ${manifest.file.sha256})\n` +
      `  signed by  key ${built.keyId}\n`,
  );
}
