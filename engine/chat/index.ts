// Public surface of the chat module: message types, template selection and rendering, and their errors.

export type { ChatMessage, ChatRole, ChatToolCall } from "./messages.js";
export { compileChatTemplate } from "./compile.js";
export { type ChatFormat, chatFormatOf, DEFAULT_CHAT_TEMPLATE, DEFAULT_TEMPLATE_TURN_MARKERS } from "./default-template.js";
export { ChatTemplateError, type ChatTemplateFailure, NoChatTemplateError } from "./errors.js";
export { type ChatTemplateOptions, renderChatTemplate } from "./template.js";
export { type ChatTemplateField, requireChatTemplate } from "./template-source.js";
