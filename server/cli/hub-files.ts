// Which GGUF file of a Hugging Face repository `--model hf:<org>/<repo>[:<quant>]` means, chosen as llama.cpp's `-hf`
// chooses it: the quantization tag matched case-insensitively in the file names (`Q4_K_M` by default), a whole file
// before a split one's first part, projector and importance-matrix files left out; a split model takes all its parts.
import { UsageError } from "../../engine/cli/arguments.js";
import { parseSplitName } from "../../engine/model/gguf/split.js";

/** The prefix that names a model on the Hugging Face Hub rather than a path. */
export const HUB_PREFIX = "hf:";

/** The quantization picked when the name gives none (as llama.cpp and Ollama do). */
export const DEFAULT_QUANT = "Q4_K_M";

/** A model named on the Hub: `hf:<org>/<repo>[:<quant>]`. */
export interface HubModelName {
  /** `<org>/<repo>`. */
  repository: string;
  /** The quantization asked for, as written; {@link DEFAULT_QUANT} when the name gives none. */
  quant: string;
  /** Whether the name gave the quantization. */
  quantGiven: boolean;
  /** The name as given (`hf:Qwen/Qwen3-8B-GGUF:Q8_0`). */
  text: string;
}

/** One file of a repository, as the Hub's tree lists it. */
export interface HubFile {
  /** Path in the repository (`Q4_K_M/model-Q4_K_M-00001-of-00002.gguf`). */
  path: string;
  size: number;
  /** The SHA-256 of an LFS file (its `lfs.oid`); undefined for a file stored in git itself. */
  sha256: string | undefined;
}

// The Hub's repository names: letters, digits, `-`, `_`, `.`, neither starting nor ending with `-` or `.`.
const REPOSITORY_PART = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_])?$/;
const QUANT = /^[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*$/;

/** Whether a model path names a Hub model (starts with `hf:`). */
export function isHubModelName(text: string): boolean {
  return text.startsWith(HUB_PREFIX);
}

/**
 * Parses `hf:<org>/<repo>[:<quant>]`.
 * @throws UsageError naming what is wrong with the name and the form it takes.
 */
export function parseHubModelName(text: string): HubModelName {
  const form = `${HUB_PREFIX}<org>/<repo>[:<quant>], e.g. hf:Qwen/Qwen3-0.6B-GGUF:Q8_0`;
  if (!isHubModelName(text)) throw new UsageError(`${text} is not a Hub model name: it takes the form ${form}`);
  const [repository, quant, ...rest] = text.slice(HUB_PREFIX.length).split(":");
  const parts = repository.split("/");
  if (rest.length > 0 || parts.length !== 2 || !parts.every((part) => REPOSITORY_PART.test(part) && !part.includes(".."))) {
    throw new UsageError(`${text}: not a Hub model name: it takes the form ${form}`);
  }
  if (quant !== undefined && !QUANT.test(quant)) throw new UsageError(`${text}: the quantization '${quant}' must be letters, digits, _ and - (Q4_K_M, Q8_0, BF16, MXFP4, UD-Q4_K_XL)`);
  return { repository, quant: quant ?? DEFAULT_QUANT, quantGiven: quant !== undefined, text };
}

/** Whether a repository file is a model's GGUF, not a vision projector, importance matrix or speculative head. */
function isModelGguf(path: string): boolean {
  const name = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
  return name.endsWith(".gguf") && !["mmproj", "imatrix", "mtp-", "eagle3-", "dflash-", "dspark-"].some((word) => name.includes(word));
}

/** The quantization tag of a GGUF file name (`Qwen3-8B-Q4_K_M-00001-of-00002.gguf` -> `Q4_K_M`), upper-cased. */
export function quantOf(path: string): string | undefined {
  const stem = parseSplitName(path)?.prefix ?? path.replace(/\.gguf$/i, "");
  const name = stem.slice(stem.lastIndexOf("/") + 1);
  return /[-.]([A-Za-z0-9_]+)$/.exec(name)?.[1].toUpperCase();
}

/** The quantizations a repository has GGUF files of, sorted. */
export function quantsOf(files: readonly HubFile[]): string[] {
  return [...new Set(files.filter((file) => isModelGguf(file.path)).map((file) => quantOf(file.path) ?? file.path))].sort();
}

/** A repository without the quantization asked for; the message lists what it has. */
export class MissingQuantError extends UsageError {}

/**
 * The files of the model `name` asks for: one GGUF, or every part of a split one, first part first.
 * @throws MissingQuantError listing the repository's quantizations (or saying it has no GGUF) when none matches, or
 *   when a split model's parts are not all listed.
 */
export function pickModelFiles(name: HubModelName, files: readonly HubFile[]): HubFile[] {
  const quant = name.quant.toUpperCase();
  // The tag between separators: Q4_K_M matches model-Q4_K_M.gguf and model.q4_k_m-00001-of-00002.gguf, not IQ4_K_M.
  const matches = files.filter((file) => isModelGguf(file.path) && tagIn(file.path.toUpperCase(), quant));
  const whole = matches.find((file) => parseSplitName(file.path) === undefined);
  if (whole) return [whole];
  const first = matches.find((file) => parseSplitName(file.path)?.part === 1);
  if (!first) {
    const quants = quantsOf(files);
    const has = quants.length === 0
      ? `no GGUF files (${files.length === 0 ? "it is empty" : `it has ${listed(files.map((file) => file.path))}`})`
      : `${listed(quants)}: name one, as in ${HUB_PREFIX}${name.repository}:${quants[0]}`;
    throw new MissingQuantError(`${name.text}: the repository has no ${quant} GGUF${name.quantGiven ? "" : ` (the quantization picked when none is named)`}; it has ${has}`);
  }
  const split = parseSplitName(first.path)!;
  const parts: HubFile[] = [];
  for (let part = 1; part <= split.count; part++) {
    const file = files.find((candidate) => {
      const other = parseSplitName(candidate.path);
      return other !== undefined && other.prefix === split.prefix && other.count === split.count && other.part === part;
    });
    if (!file) throw new MissingQuantError(`${name.text}: ${first.path} is part 1 of ${split.count}, but the repository does not list part ${part}`);
    parts.push(file);
  }
  return parts;
}

/** Whether `tag` occurs in `path` with no letter or digit before it and `.` or `-` after it (both upper-case). */
function tagIn(path: string, tag: string): boolean {
  for (let at = path.indexOf(tag); at !== -1; at = path.indexOf(tag, at + 1)) {
    const before = at === 0 ? "" : path[at - 1];
    const after = path[at + tag.length] ?? "";
    if (!/[A-Z0-9]/.test(before) && (after === "." || after === "-")) return true;
  }
  return false;
}

/** At most 20 items joined by commas, then how many more. */
function listed(items: readonly string[]): string {
  return items.length <= 20 ? items.join(", ") : `${items.slice(0, 20).join(", ")} and ${items.length - 20} more`;
}
