// A grammar for a thinking model's answer, with the thinking left free: llama.cpp builds the same
// (common/chat-auto-parser-generator.cpp for <think> models, common_chat_params_init_gpt_oss for
// Harmony): the root allows the model's reasoning first, as free text up to its closing marker,
// and the given grammar is what comes after it.
//   think     [ <think> ] free text without </think>, </think>, optional space, then the answer
//             (the <think> is in the prompt when the template opens the thinking there)
//   harmony   any analysis messages, then the final channel's header, then the answer

import { excludingRules, grammarAsRule } from './compose.js';

/** chat/reasoning.ts's ReasoningSetup, as this file needs it. */
export interface ThinkingSetup {
  format: 'none' | 'think' | 'harmony';
  startsInside: boolean;
}

const SPACE = '( " " | "\\n"{1,2} [ \\t]{0,20} )?';

/**
 * `gbnf` for the answer of a reply that may think first (its root renamed `answer`, the text before
 * it free). Unchanged when the model does not think, or when the prompt turned the thinking off
 * (it ends with an empty "<think></think>").
 */
export function grammarAfterReasoning(gbnf: string, setup: ThinkingSetup | undefined, promptText: string): string {
  if (!setup || setup.format === 'none') return gbnf;
  const answer = grammarAsRule(gbnf, 'answer');
  if (setup.format === 'think') {
    if (promptText.trimEnd().endsWith('</think>')) return gbnf;
    const open = setup.startsInside ? '' : '( "<think>" ';
    const close = setup.startsInside ? '' : ' )?';
    return `root ::= ${open}reasoning "</think>"${close} ${SPACE} answer\n${excludingRules('reasoning', '</think>')}\n${answer}`;
  }
  // (the prompt ends "<|start|>assistant"; each analysis message ends with the next one's start)
  return [
    'root ::= ( "<|channel|>analysis<|message|>" reasoning "<|end|><|start|>assistant" )* "<|channel|>final" ( " " "<|constrain|>"? "json" | "<|constrain|>" "json" )? "<|message|>" answer',
    excludingRules('reasoning', '<|end|>'),
    answer,
  ].join('\n');
}
