// Built-in chat templates, used when a model file has no tokenizer.chat_template or its template
// fails to render. Each is a pure function (messages, bos, eos, addGenerationPrompt) → prompt text.
// Formats follow each model family's published prompt format; the family names and the detection
// rules follow llama.cpp src/llama-chat.cpp. Unlike llama.cpp's built-ins (which leave BOS to the
// tokenizer), the text here starts with the BOS text where the format has one, so the prompt shown
// to the user is the whole prompt.

import type { BuiltinTemplateName, ChatMessage } from './types.js';

export interface BuiltinTemplate {
  name: BuiltinTemplateName;
  /** End-of-turn markers the model emits when its reply is complete. */
  stops: readonly string[];
  render(messages: readonly ChatMessage[], bos: string, eos: string, addGenerationPrompt: boolean): string;
}

/**
 * A format where every message is one framed turn: the text opens with BOS (when `withBos`), each
 * message becomes turn(m), and the generation prompt opens the assistant's turn.
 */
function turnByTurn(
  name: BuiltinTemplateName, stops: readonly string[], withBos: boolean, turn: (m: ChatMessage) => string, generationPrompt: string,
): BuiltinTemplate {
  return {
    name,
    stops,
    render(messages, bos, _eos, addGen) {
      let s = withBos ? bos : '';
      for (const m of messages) s += turn(m);
      if (addGen) s += generationPrompt;
      return s;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// ChatML (OpenAI chatml.md; Qwen, Hermes, SmolLM): no BOS, every turn framed by im_start/im_end.

const chatml = turnByTurn('chatml', ['<|im_end|>'], false,
  (m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`, '<|im_start|>assistant\n');

// ---------------------------------------------------------------------------------------------
// Llama 2 chat (Meta llama `generation.py` chat_completion; HF blog "How to prompt Llama 2"):
// each exchange is "<s>[INST] {user} [/INST] {answer} </s>", contents stripped, and the system
// prompt wrapped in <<SYS>>…<</SYS>> at the start of the first user turn. The text after the last
// "[/INST]" is where the answer goes, so there is no separate generation prompt.

const llama2: BuiltinTemplate = {
  name: 'llama2',
  stops: ['</s>'],
  render(messages, bos, eos, _addGen) {
    const eosText = eos || '</s>';
    let s = '';
    let system = '';
    for (const m of messages) {
      if (m.role === 'system') {
        system += (system ? '\n' : '') + m.content;
      } else if (m.role === 'user') {
        const sys = system ? `<<SYS>>\n${system}\n<</SYS>>\n\n` : '';
        system = '';
        s += `${bos}[INST] ${(sys + m.content).trim()} [/INST]`;
      } else {
        s += ` ${m.content.trim()} ${eosText}`;
      }
    }
    if (system) s += `${bos}[INST] <<SYS>>\n${system}\n<</SYS>> [/INST]`;
    return s;
  },
};

// ---------------------------------------------------------------------------------------------
// Llama 3 / 3.x (Meta llama3 model card "prompt format"): header-framed turns ended by <|eot_id|>,
// contents trimmed (the official template applies `| trim`).

const llama3 = turnByTurn('llama3', ['<|eot_id|>'], true,
  (m) => `<|start_header_id|>${m.role}<|end_header_id|>\n\n${m.content.trim()}<|eot_id|>`,
  '<|start_header_id|>assistant<|end_header_id|>\n\n');

// ---------------------------------------------------------------------------------------------
// Phi-3 / Phi-3.5 (Microsoft Phi-3 model card "chat format"): "<|role|>\n{content}<|end|>\n".

const phi3 = turnByTurn('phi3', ['<|end|>'], true, (m) => `<|${m.role}|>\n${m.content}<|end|>\n`, '<|assistant|>\n');

// ---------------------------------------------------------------------------------------------
// Gemma (Google Gemma model card "formatting"): roles "user" and "model", contents trimmed. Gemma
// has no system role; as Gemma 3's template does, the system text opens the first user turn.

const gemma: BuiltinTemplate = {
  name: 'gemma',
  stops: ['<end_of_turn>'],
  render(messages, bos, _eos, addGen) {
    let s = bos;
    let system = '';
    for (const m of messages) {
      if (m.role === 'system') {
        system += (system ? '\n' : '') + m.content.trim();
        continue;
      }
      const role = m.role === 'assistant' ? 'model' : 'user';
      let content = m.content.trim();
      if (system && role === 'user') {
        content = `${system}\n\n${content}`;
        system = '';
      }
      s += `<start_of_turn>${role}\n${content}<end_of_turn>\n`;
    }
    if (system) s += `<start_of_turn>user\n${system}<end_of_turn>\n`;
    if (addGen) s += '<start_of_turn>model\n';
    return s;
  },
};

// ---------------------------------------------------------------------------------------------
// Mistral (mistralai cookbook, concept-deep-dive/tokenization/chat_templates.md). The versions
// differ only in the spaces around [INST]/[/INST]:
//   v1:        "<s> [INST] {user} [/INST] {answer}</s>"
//   v3:        "<s>[INST] {user}[/INST] {answer}</s>"   (answer trimmed)
//   v3-tekken: "<s>[INST]{user}[/INST]{answer}</s>"
//   v7:        "<s>[SYSTEM_PROMPT] {system}[/SYSTEM_PROMPT][INST] {user}[/INST] {answer}</s>"
// v1–v3 have no system slot: as llama.cpp does, system text opens the next [INST] followed by a
// blank line.

function mistralV1toV3(name: 'mistral-v1' | 'mistral-v3' | 'mistral-v3-tekken'): BuiltinTemplate {
  const lead = name === 'mistral-v1' ? ' ' : '';
  const trail = name === 'mistral-v3-tekken' ? '' : ' ';
  const trimAnswer = name === 'mistral-v3';
  return {
    name,
    stops: ['</s>'],
    render(messages, bos, eos, _addGen) {
      const eosText = eos || '</s>';
      let s = bos;
      let inTurn = false;
      for (const m of messages) {
        if (!inTurn && m.role !== 'assistant') {
          s += `${lead}[INST]${trail}`;
          inTurn = true;
        }
        if (m.role === 'system') s += `${m.content}\n\n`;
        else if (m.role === 'user') s += `${m.content}${lead}[/INST]`;
        else {
          s += `${trail}${trimAnswer ? m.content.trim() : m.content}${eosText}`;
          inTurn = false;
        }
      }
      return s;
    },
  };
}

const mistralV7: BuiltinTemplate = {
  name: 'mistral-v7',
  stops: ['</s>'],
  render(messages, bos, eos, _addGen) {
    const eosText = eos || '</s>';
    let s = bos;
    for (const m of messages) {
      if (m.role === 'system') s += `[SYSTEM_PROMPT] ${m.content}[/SYSTEM_PROMPT]`;
      else if (m.role === 'user') s += `[INST] ${m.content}[/INST]`;
      else s += ` ${m.content}${eosText}`;
    }
    return s;
  },
};

// ---------------------------------------------------------------------------------------------
// Plain "User:/Assistant:" transcript for models with no chat format at all (base models such as
// the stories260K demo). The reply ends when the model starts the next "User:" line.

const plain = turnByTurn('plain', ['\nUser:'], true, (m) => {
  const label = m.role === 'system' ? 'System' : m.role === 'user' ? 'User' : 'Assistant';
  return `${label}: ${m.content}\n`;
}, 'Assistant:');

// ---------------------------------------------------------------------------------------------
// gpt-oss (OpenAI Harmony, the openai/gpt-oss chat_template.jinja without tools or a date): the
// fixed system message, the system prompt as the developer's "# Instructions", every turn
// "<|start|>{role}<|message|>…<|end|>", an earlier answer on the final channel. The model then
// writes on its analysis channel, "<|end|>", then "<|start|>assistant<|channel|>final<|message|>…"
// and ends with <|return|> (or <|call|> for a tool call), so <|end|> is not a stop.

const HARMONY_SYSTEM = 'You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06\n\n'
  + 'Reasoning: medium\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message.';

const gptOss: BuiltinTemplate = {
  name: 'gpt-oss',
  stops: ['<|return|>', '<|call|>'],
  render(messages, _bos, _eos, addGen) {
    let s = `<|start|>system<|message|>${HARMONY_SYSTEM}<|end|>`;
    const system = messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n');
    if (system) s += `<|start|>developer<|message|># Instructions\n\n${system}\n\n<|end|>`;
    for (const m of messages) {
      if (m.role === 'user') s += `<|start|>user<|message|>${m.content}<|end|>`;
      else if (m.role === 'assistant') s += `<|start|>assistant<|channel|>final<|message|>${m.content}<|end|>`;
    }
    if (addGen) s += '<|start|>assistant';
    return s;
  },
};

export const BUILTIN_TEMPLATES: Readonly<Record<BuiltinTemplateName, BuiltinTemplate>> = {
  chatml,
  llama2,
  llama3,
  phi3,
  gemma,
  'mistral-v1': mistralV1toV3('mistral-v1'),
  'mistral-v3': mistralV1toV3('mistral-v3'),
  'mistral-v3-tekken': mistralV1toV3('mistral-v3-tekken'),
  'mistral-v7': mistralV7,
  'gpt-oss': gptOss,
  plain,
};
