// A small JSON-schema validator for the subset the grammar engine compiles (an independent check
// of generated outputs: it reads the schema, not the grammar). Returns the first violation or null.

type Schema = Record<string, unknown>;

export function validate(v: unknown, schema: Schema, root: Schema = schema, path = '$'): string | null {
  if (typeof schema.$ref === 'string') {
    let target: unknown = root;
    for (const k of schema.$ref.replace(/^#\//, '').split('/')) target = (target as Schema)[k];
    return validate(v, target as Schema, root, path);
  }
  const alts = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (alts) return alts.some((a) => validate(v, a, root, path) === null) ? null : `${path}: matches no alternative`;
  if ('const' in schema) return JSON.stringify(v) === JSON.stringify(schema.const) ? null : `${path}: not the const`;
  if (Array.isArray(schema.enum)) return schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(v)) ? null : `${path}: not in the enum`;
  const types = schema.type === undefined ? null : Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  const typeOf = (x: unknown) => (x === null ? 'null' : Array.isArray(x) ? 'array' : Number.isInteger(x) ? 'integer' : typeof x);
  const t = typeOf(v);
  if (types && !types.some((want) => want === t || (want === 'number' && t === 'integer'))) return `${path}: ${t}, want ${types.join('|')}`;
  if (t === 'string') {
    const n = [...(v as string)].length;
    if (typeof schema.minLength === 'number' && n < schema.minLength) return `${path}: shorter than ${schema.minLength}`;
    if (typeof schema.maxLength === 'number' && n > schema.maxLength) return `${path}: longer than ${schema.maxLength}`;
  }
  if (t === 'integer' || t === 'number') {
    if (typeof schema.minimum === 'number' && (v as number) < schema.minimum) return `${path}: below ${schema.minimum}`;
    if (typeof schema.maximum === 'number' && (v as number) > schema.maximum) return `${path}: above ${schema.maximum}`;
  }
  if (t === 'array') {
    const a = v as unknown[];
    if (typeof schema.minItems === 'number' && a.length < schema.minItems) return `${path}: fewer than ${schema.minItems} items`;
    if (typeof schema.maxItems === 'number' && a.length > schema.maxItems) return `${path}: more than ${schema.maxItems} items`;
    if (schema.items) for (let i = 0; i < a.length; i++) {
      const e = validate(a[i], schema.items as Schema, root, `${path}[${i}]`);
      if (e) return e;
    }
  }
  if (t === 'object') {
    const o = v as Schema;
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    for (const r of (schema.required ?? []) as string[]) if (!(r in o)) return `${path}: missing ${r}`;
    for (const [k, x] of Object.entries(o)) {
      if (k in props) {
        const e = validate(x, props[k], root, `${path}.${k}`);
        if (e) return e;
      } else if (schema.additionalProperties === false || (schema.properties && schema.additionalProperties === undefined)) return `${path}: unexpected property ${k}`;
    }
  }
  return null;
}
