// `response_format` of the OpenAI API as a grammar for the sampler (grammar/): text (none),
// {type: "json_object"} (any JSON object; llama.cpp's server also takes a `schema` there) and
// {type: "json_schema", json_schema: {name, schema, strict}} (the schema through
// json-schema-to-grammar; without a schema, any object, as llama.cpp's server does).

import { PantheonError } from '../../shared/errors.js';
import { JSON_OBJECT_GBNF, jsonSchemaToGbnf } from '../grammar/json-schema.js';
import { ApiError } from './request.js';

type Body = Record<string, unknown>;
const isObject = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The GBNF for a request's response_format, or undefined for plain text. Throws ApiError (400). */
export function responseFormatGrammar(rf: unknown): string | undefined {
  if (rf === undefined || rf === null) return undefined;
  if (!isObject(rf)) throw new ApiError(400, "'response_format' must be an object", 'response_format', 'invalid_type');
  const schema = (param: string, s: unknown): string => {
    if (!isObject(s) && typeof s !== 'boolean') throw new ApiError(400, `'${param}' must be a JSON schema object`, param, 'invalid_type');
    try {
      return jsonSchemaToGbnf(s);
    } catch (err) {
      throw new ApiError(400, err instanceof PantheonError ? err.message : String(err), param, 'invalid_value');
    }
  };
  switch (rf.type) {
    case 'text':
      return undefined;
    case 'json_object':
      return rf.schema === undefined || rf.schema === null ? JSON_OBJECT_GBNF : schema('response_format.schema', rf.schema);
    case 'json_schema': {
      const js = rf.json_schema;
      if (!isObject(js)) throw new ApiError(400, "'response_format.json_schema' must be an object with a 'schema'", 'response_format.json_schema', 'invalid_type');
      if (js.strict !== undefined && js.strict !== null && typeof js.strict !== 'boolean') throw new ApiError(400, "'response_format.json_schema.strict' must be a boolean", 'response_format.json_schema.strict', 'invalid_type');
      return js.schema === undefined || js.schema === null ? JSON_OBJECT_GBNF : schema('response_format.json_schema.schema', js.schema);
    }
    default:
      throw new ApiError(400, `'response_format.type' is ${JSON.stringify(rf.type)}; supported types are "text", "json_object" and "json_schema"`, 'response_format.type', 'invalid_value');
  }
}
