// The organization forms' fields as the forms label them. The server names the fields of an OrganizationPatch
// (`requestsPerMinute`, `prices.<slug>.inputPerMillion`); a message shown on the form says the label instead, so
// that the operator can find the field it speaks of.

/** Each OrganizationPatch field the forms edit, with its label on the form. */
export const ORGANIZATION_FIELD_LABELS: Readonly<Record<string, string>> = {
  name: "Name",
  pool: "Dedicated worker pool",
  closedBeta: "In the closed beta",
  billingMode: "Billing",
  planLabel: "Plan label",
  planStatus: "Plan status",
  isUnlimitedComp: "Unlimited (complimentary)",
  allowanceBasis: "Allowance basis",
  allowanceAmount: "Allowance per UTC day",
  allowanceHardCap: "Hard cap (refuse requests past it)",
  creditBalanceDollars: "Set the balance (dollars)",
  addCreditsDollars: "Add credits (dollars)",
  requestsPerMinute: "Requests per minute",
  tokensPerMinute: "Tokens per minute",
  tokensPerDay: "Tokens per day",
};

/** A field's label: its form label, a price's "Input price of <model>", else the field as named. */
export function fieldLabel(field: string): string {
  const price = /^prices\.(.+)\.(inputPerMillion|outputPerMillion)$/.exec(field);
  if (price) return `${price[2] === "inputPerMillion" ? "Input price" : "Output price"} of ${price[1]}`;
  return ORGANIZATION_FIELD_LABELS[field] ?? field;
}

/**
 * `message` with every field name the forms label said as its label, in quotes ("“Requests per minute” must be an
 * integer >= 1 ..."), and the API's `null` as the form's empty field.
 */
export function inFormTerms(message: string): string {
  const priceFields = /\bprices\.[^\s,;:()]+?\.(?:inputPerMillion|outputPerMillion)\b/g;
  // camelCase names are field names wherever they stand; plain words (name, pool) only where a message starts with
  // its field, as the server's checks write them ("pool must be ..."), not in its prose ("the shared pool").
  const fields = Object.keys(ORGANIZATION_FIELD_LABELS);
  const camel = fields.filter((field) => /[A-Z]/.test(field)).sort((a, b) => b.length - a.length).join("|");
  const plain = fields.filter((field) => !/[A-Z]/.test(field)).join("|");
  return message
    .replace(priceFields, (field) => `“${fieldLabel(field)}”`)
    .replace(new RegExp(`\\b(${camel})\\b`, "g"), (field) => `“${fieldLabel(field)}”`)
    .replace(new RegExp(`^(${plain})\\b`), (field) => `“${fieldLabel(field)}”`)
    .replace(/\bor null\b/g, "or empty")
    .replace(/\bset to null\b/g, "left empty");
}
