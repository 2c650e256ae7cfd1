// Prints the mutation reports (reports/mutation/<group>.json, as `npm run test:mutation` writes them) as a markdown
// table per group: mutants, killed, survived, timeout, no coverage, score; `--survivors` lists the surviving
// mutants too. Usage: node scripts/mutation/summary.mjs [--survivors] [group ...]
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { MUTATION_GROUPS } from "./groups.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const args = process.argv.slice(2);
const survivors = args.includes("--survivors");
const names = args.filter((arg) => !arg.startsWith("-"));
const groups = names.length === 0 ? MUTATION_GROUPS : MUTATION_GROUPS.filter((group) => names.includes(group.name));

const rows = ["| group | mutants | killed | survived | timeout | no coverage | ignored | score |", "|---|--:|--:|--:|--:|--:|--:|--:|"];
const listed = [];
for (const group of groups) {
  const file = join(root, "reports", "mutation", `${group.name}.json`);
  if (!existsSync(file)) {
    rows.push(`| ${group.name} | no report | | | | | | |`);
    continue;
  }
  const report = JSON.parse(readFileSync(file, "utf8"));
  const count = { Killed: 0, Survived: 0, Timeout: 0, NoCoverage: 0, Ignored: 0, CompileError: 0, RuntimeError: 0 };
  for (const [path, { mutants }] of Object.entries(report.files)) {
    for (const mutant of mutants) {
      count[mutant.status] = (count[mutant.status] ?? 0) + 1;
      if (survivors && (mutant.status === "Survived" || mutant.status === "NoCoverage")) {
        const { line, column } = mutant.location.start;
        listed.push(`- ${group.name}: \`${path}:${line}:${column}\` ${mutant.mutatorName} (${mutant.status}) -> \`${mutant.replacement ?? ""}\``);
      }
    }
  }
  // Stryker's score: detected (killed, timed out) over valid mutants (all but ignored and those that did not run).
  const valid = count.Killed + count.Timeout + count.Survived + count.NoCoverage;
  const score = valid === 0 ? "n/a" : `${((100 * (count.Killed + count.Timeout)) / valid).toFixed(2)}%`;
  rows.push(`| ${group.name} | ${valid} | ${count.Killed} | ${count.Survived} | ${count.Timeout} | ${count.NoCoverage} | ${count.Ignored} | ${score} |`);
}
process.stdout.write(`${rows.join("\n")}\n${listed.length > 0 ? `\n${listed.join("\n")}\n` : ""}`);
