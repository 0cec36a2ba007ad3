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
