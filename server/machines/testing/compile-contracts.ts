// Compiles the fixture's Solidity contracts with npm solc, cached on disk: solc (soljson) takes seconds to load
// and compile, and every test file that starts a local chain needs the same output.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile, rename, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Abi, Hex } from "viem";

/** One compiled contract: its ABI, creation code and the runtime code that ends up at its address. */
export interface CompiledContract {
  abi: Abi;
  bytecode: Hex;
  deployedBytecode: Hex;
}

/** The fixture's contracts by name. */
export interface CompiledContracts {
  Eip3009Token: CompiledContract;
  Multicall3: CompiledContract;
}

const CONTRACT_FILES = ["Eip3009Token.sol", "Multicall3.sol"] as const;
const CONTRACTS_DIR_IN_REPO = join("server", "machines", "testing", "contracts");

// Ganache 7.9 runs the Shanghai hardfork; solc 0.8.37 defaults to a later one whose opcodes (MCOPY, TSTORE) it lacks.
const SOLC_SETTINGS = {
  evmVersion: "shanghai",
  optimizer: { enabled: true, runs: 200 },
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
};

/**
 * The folder holding the .sol files. They are read from the source tree because tsc does not copy them to dist/:
 * walk up from this module (server/machines/testing/ or dist/server/machines/testing/) to the checkout that has them.
 */
export function contractsDirectory(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, CONTRACTS_DIR_IN_REPO);
    if (existsSync(join(candidate, CONTRACT_FILES[0]))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`compile-contracts: no ${CONTRACTS_DIR_IN_REPO} above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

/**
 * Compiles Eip3009Token.sol and Multicall3.sol (optimizer on, Shanghai EVM), or reads the result from
 * `os.tmpdir()/loom-contracts-<hash>.json`, keyed by the sources, the solc version and the settings.
 */
export async function compileContracts(): Promise<CompiledContracts> {
  const dir = contractsDirectory();
  const sources: Record<string, { content: string }> = {};
  for (const file of CONTRACT_FILES) sources[file] = { content: await readFile(join(dir, file), "utf8") };

  const cachePath = join(tmpdir(), `loom-contracts-${cacheKey(sources)}.json`);
  const cached = await readCache(cachePath);
  if (cached) return cached;

  const compiled = await compileWithSolc(sources);
  // Write then rename: rename is atomic, so a parallel test file reads either nothing or the whole file.
  const partPath = `${cachePath}.${process.pid}.${Date.now()}.part`;
  await writeFile(partPath, JSON.stringify(compiled));
  await rename(partPath, cachePath);
  return compiled;
}

// The solc version comes from its package.json so that a warm cache never loads soljson.
function cacheKey(sources: Record<string, { content: string }>): string {
  const require = createRequire(import.meta.url);
  const { version } = require("solc/package.json") as { version: string };
  return createHash("sha256").update(JSON.stringify({ sources, version, settings: SOLC_SETTINGS })).digest("hex");
}

async function readCache(path: string): Promise<CompiledContracts | undefined> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as CompiledContracts;
  } catch {
    return undefined;
  }
}

interface SolcOutput {
  errors?: { severity: "error" | "warning" | "info"; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>>;
}

// solc's soljson is an emscripten module that loads and compiles synchronously for tens of seconds on a busy
// machine: in the test process that would stall its event loop past vitest's 60 s RPC timeout. A child process
// runs it instead, reading the standard JSON input on stdin and writing the output on stdout (soljson's own
// process-wide handlers stay in the child too).
const SOLC_CHILD = `
const solc = require(process.argv[1]);
let input = "";
process.stdin.setEncoding("utf8").on("data", (chunk) => { input += chunk; }).on("end", () => process.stdout.write(solc.compile(input)));
`;

function runSolcChild(input: string): Promise<string> {
  const solcPath = createRequire(import.meta.url).resolve("solc");
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, ["-e", SOLC_CHILD, solcPath], { maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`solc failed: ${error.message}${stderr ? `\n${stderr}` : ""}`));
      else resolve(stdout);
    });
    child.stdin!.end(input);
  });
}

async function compileWithSolc(sources: Record<string, { content: string }>): Promise<CompiledContracts> {
  const input = { language: "Solidity", sources, settings: SOLC_SETTINGS };
  const output = JSON.parse(await runSolcChild(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join("\n")}`);

  const pick = (file: string, name: string): CompiledContract => {
    const contract = output.contracts?.[file]?.[name];
    if (!contract) throw new Error(`solc produced no ${name} in ${file}`);
    return {
      abi: contract.abi,
      bytecode: `0x${contract.evm.bytecode.object}`,
      deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
    };
  };
  return { Eip3009Token: pick("Eip3009Token.sol", "Eip3009Token"), Multicall3: pick("Multicall3.sol", "Multicall3") };
}
