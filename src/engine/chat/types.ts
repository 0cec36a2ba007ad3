// The shapes shared by the chat-template code: a conversation in, the exact prompt text out.

export type ChatRole = 'system' | 'user' | 'assistant';

export interface ChatMessage {
  /** 'tool': a tool's result (OpenAI tool role), for the file's template; built-ins show it as a user turn. */
  role: ChatRole | 'tool';
  /** For a reply of a reasoning model: its answer only (see reasoning.ts). */
  content: string;
  /**
   * A reply's reasoning, kept apart from its answer. Given to the file's template (as Qwen3's
   * `reasoning_content` and gpt-oss's `thinking`), which decides whether the prompt shows it (for
   * earlier turns they do not); the built-in templates never show it.
   */
  reasoning?: string;
  /** An assistant turn's tool calls (arguments as JSON text; the template gets them parsed). */
  toolCalls?: { id: string; name: string; arguments: string }[];
  /** A tool turn: the call it answers, and the function's name. */
  toolCallId?: string;
  name?: string;
}

/** What the renderer needs from a model file (see `templateInfoFromGguf`). */
export interface TemplateInfo {
  /** tokenizer.chat_template, a Jinja template (absent in many base models). */
  template: string | null;
  /** Token texts of tokenizer.ggml.bos_token_id / eos_token_id ('' when the file has none). */
  bosToken: string;
  eosToken: string;
  /** general.architecture and general.name. */
  architecture: string | null;
  name: string | null;
  /**
   * Chat marker tokens found in the vocabulary (e.g. "<|im_start|>", "<|eot_id|>"); a file without a
   * template but with these tokens was trained on that format. Optional: omit when unknown.
   */
  vocabMarkers?: readonly string[];
}

/** Names of the built-in templates (llama.cpp llama-chat.cpp uses the same family names). */
export type BuiltinTemplateName =
  | 'chatml' | 'llama2' | 'llama3' | 'phi3' | 'gemma'
  | 'mistral-v1' | 'mistral-v3' | 'mistral-v3-tekken' | 'mistral-v7'
  | 'gpt-oss' | 'plain';

export interface RenderedChat {
  /** The prompt exactly as the model should see it, special-token texts included. */
  text: string;
  /** "gguf" when the file's own template was used, else the built-in template's name. */
  templateName: 'gguf' | BuiltinTemplateName;
  /** End-of-turn markers of the format; generation stops when one appears in the output text. */
  stopStrings: string[];
  /** True when `text` starts with the BOS token's text: the tokenizer must not add a second BOS. */
  startsWithBos: boolean;
  /** The format family the prompt follows (for a "gguf" render, the family detected from it). */
  family: BuiltinTemplateName;
  /** Readable one-line notes: why a fallback was used, messages the template dropped. */
  notes: string[];
  /**
   * Set when the file's template passed a time or size limit and the built-in was used: one line
   * for the user ("The file's chat template was too slow (…); using ChatML."), also in `notes`.
   */
  notice?: string;
}
