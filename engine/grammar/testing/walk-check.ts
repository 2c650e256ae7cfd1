// Random walks through a schema's automaton, checked the way the corpus is: no walk may dead-end, and every complete
// one must parse as JSON and pass ajv (ajv-formats full mode, draft-07 when the schema says so).
import { constraintGrammar } from "../answer.js";
import { GrammarAutomaton } from "../automaton.js";
import type { JsonWhitespace } from "../schema/layout.js";
import { seededRandom } from "../../testing/seeded-random.js";
import { randomWalk } from "./byte-walk.js";
import { validatorFor } from "./validator.js";

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/** What the walks found: the complete documents, and every problem (a dead end, invalid JSON, an ajv error). */
export interface WalkReport {
  documents: unknown[];
  texts: string[];
  problems: string[];
}

/** `walks` seeded random walks through the automaton of `schema`. */
export function checkWalks(schema: unknown, walks = 40, whitespace: JsonWhitespace = "compact", maxBytes = 400): WalkReport {
  const automaton = new GrammarAutomaton(constraintGrammar({ format: { type: "json_schema", schema }, whitespace }));
  const validate = validatorFor(schema).compile(schema as object);
  const report: WalkReport = { documents: [], texts: [], problems: [] };
  for (let seed = 1; seed <= walks; seed++) {
    const walk = randomWalk(automaton, seededRandom(seed * 7919 + 17), maxBytes);
    const text = new TextDecoder().decode(walk.bytes);
    if (walk.deadEnd) report.problems.push(`dead end after ${JSON.stringify(text)}`);
    if (!walk.complete) continue;
    try {
      const document = JSON.parse(STRICT_UTF8.decode(walk.bytes));
      if (!validate(document)) report.problems.push(`${text}: ${JSON.stringify(validate.errors)}`);
      report.documents.push(document);
      report.texts.push(text);
    } catch (error) {
      report.problems.push(`${text}: ${(error as Error).message}`);
    }
  }
  return report;
}
