// Grammar-constrained decoding: JSON Schema and tool-call formats compiled to a grammar over lexemes, matched by a
// lazily built automaton whose token masks are cached per state.
export { type AnswerFormat, type ConstraintSpec, type ToolSpec, constraintGrammar } from "./answer.js";
export { EmptyGrammarError, GrammarAutomaton, MatchState } from "./automaton.js";
export { CompiledConstraint, ConstraintViolationError, TokenConstraint } from "./constraint.js";
export { type Grammar, formatGrammar } from "./grammar.js";
export { SchemaError } from "./schema/errors.js";
export { type JsonWhitespace, MAX_PRETTY_LEVEL } from "./schema/layout.js";
export { COMPILE_LIMITS } from "./schema/budget.js";
export { type TokenMask, maskHas, maskLogits } from "./token-masks.js";
