// Compiles the AssemblyScript kernels (every kernels/<op>/*.as.ts, helpers in kernels/assembly/) into one
// WebAssembly module, dist/wasm/kernels.wasm (+ kernels.wat), with SIMD and threads over an imported shared memory.
// Usage: npm run build:wasm   (node scripts/build-wasm.mjs [--debug])
import { existsSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import asc from "assemblyscript/asc";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const kernelsDir = join(root, "kernels");
const outDir = join(root, "dist", "wasm");

/** Lowest byte the JS arena may use: everything below belongs to AssemblyScript's static data. */
const RESERVED_LOW_BYTES = 65536;

/** Every op's AssemblyScript file is an entry: its exports become the module's exports. */
function entryFiles() {
  const entries = [];
  for (const dir of readdirSync(kernelsDir, { withFileTypes: true })) {
    if (!dir.isDirectory() || dir.name === "assembly") continue;
    for (const file of readdirSync(join(kernelsDir, dir.name))) {
      if (file.endsWith(".as.ts")) entries.push(relative(root, join(kernelsDir, dir.name, file)));
    }
  }
  return entries.sort();
}

const entries = entryFiles();
if (entries.length === 0) throw new Error(`no kernels/<op>/*.as.ts files under ${kernelsDir}`);
mkdirSync(outDir, { recursive: true });
const debug = process.argv.includes("--debug");
const args = [
  ...entries,
  "--outFile", relative(root, join(outDir, "kernels.wasm")),
  "--textFile", relative(root, join(outDir, "kernels.wat")),
  "--enable", "simd",
  "--enable", "threads",
  "--importMemory",
  "--sharedMemory",
  "--initialMemory", "1",
  "--maximumMemory", "65536",
  "--runtime", "stub",
  ...(debug ? ["--debug"] : ["-O3", "--noAssert"]),
];

const previousCwd = process.cwd();
process.chdir(root);
const { error } = await asc.main(args, { stdout: process.stdout, stderr: process.stderr });
process.chdir(previousCwd);
if (error) {
  console.error(`build-wasm: AssemblyScript compilation failed: ${error.message}`);
  process.exit(1);
}

// NOTE: the runtime's arena starts at RESERVED_LOW_BYTES; the module's static data (active data segments, e.g.
// the libm reduction table) must end below it.
const wat = readFileSync(join(outDir, "kernels.wat"), "utf8");
let dataEnd = 0;
for (const segment of wat.matchAll(/\(data \$\S+ \(i32\.const (\d+)\) "((?:[^"\\]|\\.)*)"\)/g)) {
  const bytes = (segment[2].match(/\\[0-9a-fA-F]{2}|\\.|[^\\]/g) ?? []).length;
  dataEnd = Math.max(dataEnd, Number(segment[1]) + bytes);
}
if (dataEnd > RESERVED_LOW_BYTES) {
  console.error(`build-wasm: static data ends at ${dataEnd}, above the reserved ${RESERVED_LOW_BYTES} bytes`);
  process.exit(1);
}
if (!existsSync(join(outDir, "kernels.wasm"))) process.exit(1);
const exportsCount = (wat.match(/\(export "/g) ?? []).length;
console.log(`build-wasm: ${entries.length} kernel files, ${exportsCount} exports -> ${relative(root, join(outDir, "kernels.wasm"))} (static data ends at ${dataEnd})`);
