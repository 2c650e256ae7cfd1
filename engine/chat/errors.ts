// Typed errors for chat templates: a model without one, a template that does not parse, fails, or rejects the input.

/** What went wrong with a chat template. */
export type ChatTemplateFailure =
  /** The template is not valid Jinja. */
  | "syntax"
  /** The template failed while rendering (for example, it used a feature the Jinja engine lacks). */
  | "render"
  /** The template itself rejected the conversation with `raise_exception(...)`. */
  | "rejected"
  /** The messages or options handed to the template are malformed. */
  | "input";

/** A chat template could not be applied; `message` says what failed and why. */
export class ChatTemplateError extends Error {
  override readonly name: string = "ChatTemplateError";
  constructor(
    /** What went wrong. */
    readonly failure: ChatTemplateFailure,
    /** The detail, in words a user can act on. */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${describeFailure(failure)}: ${detail}`, options);
  }
}

/**
 * A template was required of a model that ships none. The engine never raises it for a model's conversations: those get
 * the default template (chatFormatOf in default-template.ts); it guards the lower-level functions.
 */
export class NoChatTemplateError extends Error {
  override readonly name = "NoChatTemplateError";
  constructor(
    /** The model (name or path) without a template, when known. */
    readonly model?: string,
  ) {
    super(`${model ? `${model}: ` : ""}model has no chat template (chatFormatOf gives it the default, ChatML)`);
  }
}

function describeFailure(failure: ChatTemplateFailure): string {
  switch (failure) {
    case "syntax":
      return "chat template does not parse";
    case "render":
      return "chat template failed while rendering";
    case "rejected":
      return "chat template rejected the conversation";
    case "input":
      return "bad chat template input";
  }
}
