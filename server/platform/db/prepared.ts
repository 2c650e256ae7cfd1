// Bookkeeping of prepared statements shared by both back ends.
import type { PreparedStatement } from "../contract.js";

/**
 * Records `statement` in `known` (name -> text) and refuses a name already used for another text: the server would
 * otherwise run the first text under the second's name.
 */
export function requireOneText(known: Map<string, string>, statement: PreparedStatement): void {
  const text = known.get(statement.name);
  if (text === undefined) known.set(statement.name, statement.text);
  else if (text !== statement.text) throw new Error(`prepared statement '${statement.name}' was given two different texts`);
}
