// Compiles the AssemblyScript kernels (every kernels/<op>/*.as.ts, helpers in kernels/assembly/) into one
// WebAssembly module, dist/wasm/kernels.wasm (+ kernels.wat), with SIMD and threads over an imported shared memory,
// and once more with relaxed SIMD as dist/wasm/kernels-relaxed.wasm.
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

/**
 * The two builds of the same sources: plain SIMD (runs everywhere) and relaxed SIMD, where kernels take their
 * ASC_FEATURE_RELAXED_SIMD branches (int8 dot products; the runtime picks it where the engine accepts it).
 */
const VARIANTS = [
  { name: "kernels", features: ["simd", "threads"] },
  { name: "kernels-relaxed", features: ["simd", "threads", "relaxed-simd"] },
];

for (const variant of VARIANTS) {
  const args = [
    ...entries,
    "--outFile", relative(root, join(outDir, `${variant.name}.wasm`)),
    "--textFile", relative(root, join(outDir, `${variant.name}.wat`)),
    ...variant.features.flatMap((feature) => ["--enable", feature]),
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
    console.error(`build-wasm: AssemblyScript compilation of ${variant.name} failed: ${error.message}`);
    process.exit(1);
  }

  // NOTE: the runtime's arena starts at RESERVED_LOW_BYTES; the module's static data (active data segments, e.g.
  // the libm reduction table) must end below it.
  const wat = readFileSync(join(outDir, `${variant.name}.wat`), "utf8");
  let dataEnd = 0;
  for (const segment of wat.matchAll(/\(data \$\S+ \(i32\.const (\d+)\) "((?:[^"\\]|\\.)*)"\)/g)) {
    const bytes = (segment[2].match(/\\[0-9a-fA-F]{2}|\\.|[^\\]/g) ?? []).length;
    dataEnd = Math.max(dataEnd, Number(segment[1]) + bytes);
  }
  if (dataEnd > RESERVED_LOW_BYTES) {
    console.error(`build-wasm: static data of ${variant.name} ends at ${dataEnd}, above the reserved ${RESERVED_LOW_BYTES} bytes`);
    process.exit(1);
  }
  if (!existsSync(join(outDir, `${variant.name}.wasm`))) process.exit(1);
  const exportsCount = (wat.match(/\(export "/g) ?? []).length;
  console.log(`build-wasm: ${entries.length} kernel files, ${exportsCount} exports -> ${relative(root, join(outDir, `${variant.name}.wasm`))} (${variant.features.join(", ")}; static data ends at ${dataEnd})`);
}
