// The grammar a tool call is generated under, so its name is one of the tools and its arguments
// match that function's parameter schema.
// - A named function (tool_choice {function: {name}}) gets the call opened up to its arguments in
//   the prompt (tools.ts toolCallPrefix): the grammar is the arguments' JSON schema, then the text
//   that closes the call in the model's format.
// - tool_choice 'required' gets the opener in the prompt too; the grammar is the rest of a call
//   to any one tool: Hermes/Mistral the whole {name, arguments} object; Llama 3 the name after
//   `{"name": "`, then its parameters; Harmony the name after `to=functions.`, the header's end,
//   then its arguments.
// - Under 'auto' the model may answer in prose; a call it opens itself is constrained from its
//   opener on (lazyToolCallGrammar), with llama.cpp's triggers (common/chat.cpp): Hermes
//   <tool_call>, Mistral [TOOL_CALLS], Llama 3.x a reply that starts as a call's JSON
//   (`{"name": "`, with an optional `"type": "function"`), Harmony a `to=functions.` recipient in
//   the channel header or the role header.

import { toolCallSchema, type ToolChoice, type ToolDefinition, type ToolFormat } from '../chat/tools.js';
import { grammarAsRule } from '../grammar/compose.js';
import { gbnfLiteral as lit, jsonSchemaToGbnf } from '../grammar/json-schema.js';
import type { LazyGrammar } from '../grammar/lazy.js';

/** The schema's grammar as rules starting at `name`, to be used inside another grammar. */
function schemaRule(schema: unknown, name: string): string {
  return grammarAsRule(jsonSchemaToGbnf(schema), name);
}

const params = (t: ToolDefinition) => t.function.parameters ?? { type: 'object' };
const SPACE = '( " " | "\\n"{1,2} [ \\t]{0,20} )?';

/** Llama 3: each tool's name as a JSON string's rest (after `"name": "`), then its parameters. */
function llama3AfterName(tools: readonly ToolDefinition[]): string[] {
  const alts = tools.map((t, i) => `${lit(`${t.function.name}"`)} ${SPACE} "," ${SPACE} "\\"parameters\\"" ${SPACE} ":" ${SPACE} tool-args-${i} ${SPACE} "}"`);
  return [`tool-call-rest ::= ${alts.join(' | ')}`, ...tools.map((t, i) => schemaRule(params(t), `tool-args-${i}`))];
}

/** Harmony: each tool's name (after `to=functions.`), the header's end, then its arguments. */
function harmonyAfterName(tools: readonly ToolDefinition[]): string[] {
  // recipient in the channel header: …commentary to=functions.NAME [<|constrain|>json]<|message|>ARGS
  // in the role header: <|start|>assistant to=functions.NAME<|channel|>commentary [json]<|message|>ARGS
  // (something must part the name from "json")
  const constrain = '( " " "<|constrain|>"? "json" | "<|constrain|>" "json" )?';
  const inChannel = tools.map((t, i) => `${lit(t.function.name)} ${constrain} "<|message|>" tool-args-${i}`);
  const inRole = tools.map((t, i) => `${lit(t.function.name)} "<|channel|>" ( "commentary" | "analysis" ) ${constrain} "<|message|>" tool-args-${i}`);
  return [`tool-in-channel ::= ${inChannel.join(' | ')}`, `tool-in-role ::= ${inRole.join(' | ')}`, ...tools.map((t, i) => schemaRule(params(t), `tool-args-${i}`))];
}

/**
 * For tool_choice 'auto': the grammar of a call and the triggers that start it, so a call the model
 * makes on its own is constrained from its opener on.
 */
export function lazyToolCallGrammar(format: ToolFormat, tools: readonly ToolDefinition[]): LazyGrammar | undefined {
  if (tools.length === 0) return undefined;
  switch (format) {
    case 'hermes':
    case 'mistral':
      // from the marker's end: what toolCallGrammar 'required' matches after the opener
      return { grammar: toolCallGrammar(format, tools, 'required')!, triggers: [{ pattern: format === 'hermes' ? /<tool_call>/ : /\[TOOL_CALLS\]/ }] };
    case 'llama3':
      return {
        grammar: [`root ::= "{" ${SPACE} ( "\\"type\\"" ${SPACE} ":" ${SPACE} "\\"function\\"" ${SPACE} "," ${SPACE} )? "\\"name\\"" ${SPACE} ":" ${SPACE} "\\"" tool-call-rest`, ...llama3AfterName(tools)].join('\n'),
        triggers: [{ pattern: /^\s*(\{\s*(?:"type"\s*:\s*"function"\s*,\s*)?"name"\s*:\s*")/, atStart: true }],
      };
    case 'harmony':
      return {
        grammar: [
          `root ::= "<|channel|>" ( "commentary" | "analysis" ) " "? "to=functions." tool-in-channel | " "? "to=functions." tool-in-role`,
          ...harmonyAfterName(tools),
        ].join('\n'),
        // right after the prompt's "<|start|>assistant", or after a later message's
        triggers: [
          { pattern: /^((?:<\|channel\|>(?:commentary|analysis))?\s*to=functions\.)/, atStart: true },
          { pattern: /<\|start\|>assistant((?:<\|channel\|>(?:commentary|analysis))?\s*to=functions\.)/ },
        ],
      };
  }
}

export function toolCallGrammar(format: ToolFormat, tools: readonly ToolDefinition[], choice: ToolChoice): string | undefined {
  if (choice === 'auto' || choice === 'none') return undefined;
  if (typeof choice === 'object') {
    const tool = tools.find((t) => t.function.name === choice.name);
    if (!tool) return undefined;
    const close = { hermes: '}\n</tool_call>', llama3: '}', mistral: '}]', harmony: '' }[format];
    return `root ::= tool-args${close ? ` ${lit(close)}` : ''}\n${schemaRule(params(tool), 'tool-args')}`;
  }
  if (tools.length === 0) return undefined;
  switch (format) {
    // (the template writes "<tool_call>\n{…}\n</tool_call>"; models keep or drop the newlines)
    case 'hermes':
      return `root ::= [ \\t\\n]* tool-call [ \\t\\n]* "</tool_call>"\n${schemaRule(toolCallSchema(format, tools), 'tool-call')}`;
    case 'mistral':
      return `root ::= "[" tool-call "]"\n${schemaRule(toolCallSchema(format, tools), 'tool-call')}`;
    // after the prompt's `{"name": "`
    case 'llama3':
      return ['root ::= tool-call-rest', ...llama3AfterName(tools)].join('\n');
    // after the prompt's `<|channel|>commentary to=functions.`
    case 'harmony':
      return ['root ::= tool-in-channel', ...harmonyAfterName(tools)].join('\n');
  }
}
