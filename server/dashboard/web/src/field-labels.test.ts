// The organization forms' messages name fields as the forms label them, not as the API does.
import { describe, expect, it } from "vitest";
import { fieldLabel, inFormTerms } from "./field-labels";

describe("inFormTerms", () => {
  it("says the form's label for every field the server's message names", () => {
    expect(inFormTerms("requestsPerMinute must be an integer >= 1, or null for no limit, got 0")).toBe("“Requests per minute” must be an integer >= 1, or empty for no limit, got 0");
    expect(inFormTerms("set the balance (creditBalanceDollars) or add to it (addCreditsDollars), not both")).toBe("set the balance (“Set the balance (dollars)”) or add to it (“Add credits (dollars)”), not both");
    expect(inFormTerms("allowanceAmount cannot be set while allowanceBasis is set to null (no allowance)")).toBe("“Allowance per UTC day” cannot be set while “Allowance basis” is left empty (no allowance)");
    expect(inFormTerms("prices.service/tim-a-27b.inputPerMillion must be a number from 0 to 1000000, got -1")).toBe("“Input price of service/tim-a-27b” must be a number from 0 to 1000000, got -1");
    expect(inFormTerms("tokensPerMinute and tokensPerDay")).toBe("“Tokens per minute” and “Tokens per day”");
  });

  it("leaves other words alone, a field name inside a word included", () => {
    expect(inFormTerms("the organization could not be changed")).toBe("the organization could not be changed");
    expect(inFormTerms("poolside names")).toBe("poolside names");
    expect(inFormTerms('pool "default" is the shared pool: set null to leave a dedicated pool')).toBe('“Dedicated worker pool” "default" is the shared pool: set null to leave a dedicated pool');
    expect(inFormTerms("name must not be empty or only whitespace")).toBe("“Name” must not be empty or only whitespace");
  });
});

describe("fieldLabel", () => {
  it("names prices by model and unknown fields as they are", () => {
    expect(fieldLabel("prices.*.outputPerMillion")).toBe("Output price of *");
    expect(fieldLabel("tokensPerDay")).toBe("Tokens per day");
    expect(fieldLabel("bogus")).toBe("bogus");
  });
});
