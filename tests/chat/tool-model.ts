// A scripted tool-calling model (thinker-model.ts's construction, Qwen3's template): greedy
// decoding writes one Hermes tool call, whatever the prompt, as long as it ends "<|im_start|>assistant\n":
//   <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call><|im_end|>
// A prompt that ends with "<tool_call>" (a call forced by tool_choice) continues the same call.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONTROL, scriptedGguf, template, USER_DEFINED } from './thinker-model.js';

export const TOOL_CALL_NAME = 'get_weather';
export const TOOL_CALL_ARGUMENTS = { city: 'Paris' };

export function toolCallerGguf(): Uint8Array {
  return scriptedGguf({
    name: 'Scripted Tool Caller',
    template: template('Qwen-Qwen3-0.6B.jinja'),
    specials: [['<|im_start|>', CONTROL], ['<|im_end|>', CONTROL], ['<tool_call>', USER_DEFINED], ['</tool_call>', USER_DEFINED], ['<think>', USER_DEFINED], ['</think>', USER_DEFINED]],
    reply: ['<tool_call>', '{"name":', '▁"get_weather",', '▁"arguments":', '▁{"city":', '▁"Paris"}}', '</tool_call>', '<|im_end|>'],
    trigger: '<0x0A>',
    eos: '<|im_end|>',
  });
}

/** Write the scripted tool caller into `dir`; returns its path. */
export function writeToolCallerModel(dir: string): string {
  const path = join(dir, 'scripted-tool-caller.gguf');
  writeFileSync(path, toolCallerGguf());
  return path;
}

/**
 * The scripted caller in Llama 3.x's format (Llama 3.2's template): every prompt ends
 * "<|start_header_id|>assistant<|end_header_id|>\n\n", and the reply is the call's JSON:
 *   {"name": "get_weather", "parameters": {"city": "Paris"}}<|eot_id|>
 */
export function llama3ToolCallerGguf(): Uint8Array {
  return scriptedGguf({
    name: 'Scripted Llama 3 Tool Caller',
    template: template('meta-llama-Llama-3.2-3B-Instruct.jinja'),
    specials: [['<|begin_of_text|>', CONTROL], ['<|start_header_id|>', CONTROL], ['<|end_header_id|>', CONTROL], ['<|eot_id|>', CONTROL], ['<|eom_id|>', CONTROL], ['<|python_tag|>', CONTROL]],
    reply: ['{"name":', '▁"get_weather",', '▁"parameters":', '▁{"city":', '▁"Paris"}}', '<|eot_id|>'],
    trigger: '<0x0A>',
    eos: '<|eot_id|>',
  });
}

/**
 * The scripted caller in gpt-oss's Harmony format (its own template): every prompt ends
 * "<|start|>assistant" (last token the byte "t"), and the reply is a commentary message to the tool:
 *   <|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>{"city": "Paris"}<|call|>
 */
export function harmonyToolCallerGguf(): Uint8Array {
  return scriptedGguf({
    name: 'Scripted Harmony Tool Caller',
    template: template('openai-gpt-oss-120b.jinja'),
    specials: ['<|start|>', '<|end|>', '<|message|>', '<|channel|>', '<|return|>', '<|call|>', '<|constrain|>'].map((t): [string, number] => [t, CONTROL]),
    reply: ['<|channel|>', 'commentary', '▁to=functions.get_weather', '<|constrain|>', 'json', '<|message|>', '{"city":', '▁"Paris"}', '<|call|>'],
    trigger: '<0x74>',
    eos: '<|return|>',
  });
}

/** Write one of the scripted tool callers into `dir`; returns its path. */
export function writeScriptedCaller(dir: string, format: 'hermes' | 'llama3' | 'harmony'): string {
  const path = join(dir, `scripted-${format}-caller.gguf`);
  writeFileSync(path, format === 'hermes' ? toolCallerGguf() : format === 'llama3' ? llama3ToolCallerGguf() : harmonyToolCallerGguf());
  return path;
}
