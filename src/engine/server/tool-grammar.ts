// The grammar a forced tool call is generated under, so its arguments always match the function's
// parameter schema. A named function (tool_choice {function: {name}}) gets the call opened up to
// its arguments in the prompt (tools.ts toolCallPrefix): the grammar is the arguments' JSON schema,
// then the text that closes the call in the model's format. tool_choice 'required' in the formats
// whose opener is a bare marker (Hermes, Mistral) gets the whole call object (toolCallSchema).
// Under 'auto' the model may answer in prose; a call it opens itself is constrained from its opener
// on (lazyToolCallGrammar).

import { toolCallPrefix, toolCallSchema, type ToolChoice, type ToolDefinition, type ToolFormat } from '../chat/tools.js';
import { jsonSchemaToGbnf } from '../grammar/json-schema.js';

/** GBNF text for a literal. */
const lit = (s: string): string => JSON.stringify(s);

/** The schema's grammar with its root renamed `name`, to be used inside another rule. */
function schemaRule(schema: unknown, name: string): string {
  return jsonSchemaToGbnf(schema).replace(/^root ::=/m, `${name} ::=`).replace(/(?<=[ (|])root(?=[ )|\n]|$)/g, name);
}

/**
 * For tool_choice 'auto': the opener a call starts with and the grammar of what follows it, so a
 * call the model makes on its own is constrained from its opener on (Hermes, Mistral).
 */
export function lazyToolCallGrammar(format: ToolFormat, tools: readonly ToolDefinition[]): { opener: string; grammar: string } | undefined {
  const grammar = toolCallGrammar(format, tools, 'required');
  return grammar ? { opener: toolCallPrefix(format), grammar } : undefined;
}

export function toolCallGrammar(format: ToolFormat, tools: readonly ToolDefinition[], choice: ToolChoice): string | undefined {
  if (choice === 'auto' || choice === 'none') return undefined;
  if (typeof choice === 'object') {
    const tool = tools.find((t) => t.function.name === choice.name);
    if (!tool) return undefined;
    const close = { hermes: '}\n</tool_call>', llama3: '}', mistral: '}]', harmony: '' }[format];
    return `root ::= tool-args${close ? ` ${lit(close)}` : ''}\n${schemaRule(tool.function.parameters ?? { type: 'object' }, 'tool-args')}`;
  }
  // (the template writes "<tool_call>\n{…}\n</tool_call>"; models keep or drop the newlines)
  if (format === 'hermes') return `root ::= [ \\t\\n]* tool-call [ \\t\\n]* "</tool_call>"\n${schemaRule(toolCallSchema(format, tools), 'tool-call')}`;
  if (format === 'mistral') return `root ::= "[" tool-call "]"\n${schemaRule(toolCallSchema(format, tools), 'tool-call')}`;
  return undefined;
}
