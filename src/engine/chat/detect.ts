// Which built-in format a model follows, from (in order of trust) its template text, the chat
// marker tokens in its vocabulary, its architecture, and its name. Template-text rules follow
// llama.cpp src/llama-chat.cpp llm_chat_detect_template.

import type { BuiltinTemplateName, TemplateInfo } from './types.js';

export type DetectionSource = 'template' | 'vocabulary' | 'architecture' | 'name' | 'default';

export interface DetectedFamily {
  name: BuiltinTemplateName;
  source: DetectionSource;
}

/** Marker tokens whose presence in a vocabulary identifies a chat format. */
export const CHAT_MARKER_TOKENS: readonly string[] = [
  '<|im_start|>', '<|im_end|>', '<|start_header_id|>', '<|eot_id|>', '<start_of_turn>', '<end_of_turn>',
  '<|user|>', '<|assistant|>', '<|end|>', '[INST]', '[/INST]', '[SYSTEM_PROMPT]', '<|channel|>',
];

export function detectFromTemplate(t: string): BuiltinTemplateName | null {
  const has = (s: string): boolean => t.includes(s);
  if (has('<|im_start|>')) return 'chatml';
  if (t.startsWith('mistral') || has('[INST]')) {
    if (has('[SYSTEM_PROMPT]')) return 'mistral-v7';
    // Mistral's official v1 / v3 / v3-tekken templates (llama.cpp's markers for them).
    if (has("' [INST] ' + system_message") || has('[AVAILABLE_TOOLS]')) {
      if (has(' [INST]')) return 'mistral-v1';
      if (has('"[INST]"')) return 'mistral-v3-tekken';
      return 'mistral-v3';
    }
    return 'llama2';
  }
  if (has('<|assistant|>') && has('<|end|>')) return 'phi3';
  if (has('<start_of_turn>')) return 'gemma';
  if (has('<|start_header_id|>') && has('<|end_header_id|>')) return 'llama3';
  if (has('<|start|>') && has('<|channel|>')) return 'gpt-oss';
  return null;
}

export function detectFromVocabulary(markers: readonly string[]): BuiltinTemplateName | null {
  const has = (s: string): boolean => markers.includes(s);
  if (has('<|im_start|>')) return 'chatml';
  if (has('<|channel|>')) return 'gpt-oss';
  if (has('<|start_header_id|>')) return 'llama3';
  if (has('<start_of_turn>')) return 'gemma';
  if (has('<|assistant|>') && has('<|end|>')) return 'phi3';
  if (has('[SYSTEM_PROMPT]')) return 'mistral-v7';
  if (has('[INST]')) return 'mistral-v3'; // control tokens [INST]/[/INST] arrived with Mistral's v3 tokenizer
  return null;
}

/** Architectures that imply one format ("llama" does not: it covers Llama 2, 3, Mistral and base models). */
export function detectFromArchitecture(arch: string): BuiltinTemplateName | null {
  if (arch.startsWith('qwen')) return 'chatml';
  if (arch === 'phi3') return 'phi3';
  if (arch === 'gpt-oss') return 'gpt-oss';
  if (arch.startsWith('gemma')) return 'gemma';
  return null;
}

export function detectFromName(name: string): BuiltinTemplateName | null {
  const n = name.toLowerCase();
  if (/llama[-_ ]?v?3/.test(n)) return 'llama3';
  if (/llama[-_ ]?v?2/.test(n)) return 'llama2';
  if (/mi[sx]tral/.test(n)) return 'mistral-v3';
  if (/qwen|chatml|hermes/.test(n)) return 'chatml';
  if (/gemma/.test(n)) return 'gemma';
  if (/phi[-_ ]?3/.test(n)) return 'phi3';
  if (/gpt[-_ ]?oss/.test(n)) return 'gpt-oss';
  return null;
}

export function detectFamily(info: TemplateInfo): DetectedFamily {
  const fromTemplate = info.template ? detectFromTemplate(info.template) : null;
  if (fromTemplate) return { name: fromTemplate, source: 'template' };
  const fromVocab = info.vocabMarkers ? detectFromVocabulary(info.vocabMarkers) : null;
  if (fromVocab) return { name: fromVocab, source: 'vocabulary' };
  const fromArch = info.architecture ? detectFromArchitecture(info.architecture) : null;
  if (fromArch) return { name: fromArch, source: 'architecture' };
  const fromName = info.name ? detectFromName(info.name) : null;
  if (fromName) return { name: fromName, source: 'name' };
  return { name: 'plain', source: 'default' };
}
