// JSON schema to GBNF, as llama.cpp's common/json-schema-to-grammar.cpp writes it (same rule names,
// same rule text, rules sorted by name), so a schema gives the grammar llama.cpp would use:
// types, properties, required, additionalProperties, enum, const, items / prefixItems with
// min/maxItems, string min/maxLength, pattern (a regex subset), formats (date, time, date-time,
// uuid), integer minimum/maximum, anyOf/oneOf/allOf, $ref into the same document ($defs,
// definitions). Remote $refs are refused.

import { UsageError } from '../../shared/errors.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

const isObj = (v: Json | undefined): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const INT_MAX = 2147483647; // std::numeric_limits<int>::max(): "no maximum" for repetitions

// ---------------------------------------------------------------------------------------------
// Repetitions and integer ranges.

function buildRepetition(item: string, min: number, max: number, sep = ''): string {
  const hasMax = max !== INT_MAX;
  if (max === 0) return '';
  if (min === 0 && max === 1) return `${item}?`;
  if (sep === '') {
    if (min === 1 && !hasMax) return `${item}+`;
    if (min === 0 && !hasMax) return `${item}*`;
    return `${item}{${min},${hasMax ? max : ''}}`;
  }
  let result = `${item} ${buildRepetition(`(${sep} ${item})`, min === 0 ? 0 : min - 1, hasMax ? max - 1 : max)}`;
  if (min === 0) result = `(${result})?`;
  return result;
}

const repeatStr = (s: string, n: number) => s.repeat(Math.max(0, n));
const chr = (c: string, d: number) => String.fromCharCode(c.charCodeAt(0) + d);

/** build_min_max_int: a grammar for the integers in [min, max] (±Infinity: unbounded). */
function buildMinMaxInt(min: number, max: number, out: string[], decimalsLeft = 16, topLevel = true): void {
  const hasMin = min !== -Infinity, hasMax = max !== Infinity;
  const digitRange = (from: string, to: string) => out.push('[', from === to ? from : `${from}-${to}`, ']');
  const moreDigits = (minD: number, maxD: number) => {
    out.push('[0-9]');
    if (minD === maxD && minD === 1) return;
    out.push('{', String(minD));
    if (maxD !== minD) {
      out.push(',');
      if (maxD !== INT_MAX) out.push(String(maxD));
    }
    out.push('}');
  };
  const uniformRange = (from: string, to: string): void => {
    let i = 0;
    while (i < from.length && i < to.length && from[i] === to[i]) i++;
    if (i > 0) out.push('"', from.slice(0, i), '"');
    if (i < from.length && i < to.length) {
      if (i > 0) out.push(' ');
      const subLen = from.length - i - 1;
      if (subLen > 0) {
        const fromSub = from.slice(i + 1), toSub = to.slice(i + 1);
        const zeros = repeatStr('0', subLen), nines = repeatStr('9', subLen);
        let toReached = false;
        out.push('(');
        if (fromSub === zeros) {
          digitRange(from[i], chr(to[i], -1));
          out.push(' ');
          moreDigits(subLen, subLen);
        } else {
          out.push(`[${from[i]}] `, '(');
          uniformRange(fromSub, nines);
          out.push(')');
          if (from[i] < chr(to[i], -1)) {
            out.push(' | ');
            if (toSub === nines) {
              digitRange(chr(from[i], 1), to[i]);
              toReached = true;
            } else digitRange(chr(from[i], 1), chr(to[i], -1));
            out.push(' ');
            moreDigits(subLen, subLen);
          }
        }
        if (!toReached) {
          out.push(' | ');
          digitRange(to[i], to[i]);
          out.push(' ');
          uniformRange(zeros, toSub);
        }
        out.push(')');
      } else out.push(`[${from[i]}-${to[i]}]`);
    }
  };

  if (hasMin && hasMax) {
    if (min < 0 && max < 0) {
      out.push('"-" (');
      buildMinMaxInt(-max, -min, out, decimalsLeft, true);
      out.push(')');
      return;
    }
    if (min < 0) {
      out.push('"-" (');
      buildMinMaxInt(0, -min, out, decimalsLeft, true);
      out.push(') | ');
      min = 0;
    }
    let minS = String(min);
    const maxS = String(max);
    for (let d = minS.length; d < maxS.length; d++) {
      uniformRange(minS, repeatStr('9', d));
      minS = '1' + repeatStr('0', d);
      out.push(' | ');
    }
    uniformRange(minS, maxS);
    return;
  }
  const less = Math.max(decimalsLeft - 1, 1);
  if (hasMin) {
    if (min < 0) {
      out.push('"-" (');
      buildMinMaxInt(-Infinity, -min, out, decimalsLeft, false);
      out.push(') | [0] | [1-9] ');
      moreDigits(0, decimalsLeft - 1);
    } else if (min === 0) {
      if (topLevel) {
        out.push('[0] | [1-9] ');
        moreDigits(0, less);
      } else moreDigits(1, decimalsLeft);
    } else if (min <= 9) {
      const c = String(min);
      const start = topLevel ? '1' : '0';
      if (c > start) {
        digitRange(start, chr(c, -1));
        out.push(' ');
        moreDigits(1, less);
        out.push(' | ');
      }
      digitRange(c, '9');
      out.push(' ');
      moreDigits(0, less);
    } else {
      const minS = String(min);
      const len = minS.length;
      const c = minS[0];
      if (c > '1') {
        digitRange(topLevel ? '1' : '0', chr(c, -1));
        out.push(' ');
        moreDigits(len, less);
        out.push(' | ');
      }
      digitRange(c, c);
      out.push(' (');
      buildMinMaxInt(Number(minS.slice(1)), Infinity, out, less, false);
      out.push(')');
      if (c < '9') {
        out.push(' | ');
        digitRange(chr(c, 1), '9');
        out.push(' ');
        moreDigits(len - 1, less);
      }
    }
    return;
  }
  if (hasMax) {
    if (max >= 0) {
      if (topLevel) {
        out.push('"-" [1-9] ');
        moreDigits(0, less);
        out.push(' | ');
      }
      buildMinMaxInt(0, max, out, decimalsLeft, true);
    } else {
      out.push('"-" (');
      buildMinMaxInt(-max, Infinity, out, decimalsLeft, false);
      out.push(')');
    }
    return;
  }
  throw new UsageError('At least one of min_value or max_value must be set');
}

// ---------------------------------------------------------------------------------------------
// Built-in rules (PRIMITIVE_RULES, STRING_FORMAT_RULES).

const SPACE_RULE = '| " " | "\\n"{1,2} [ \\t]{0,20}';

interface BuiltinRule {
  content: string;
  deps: string[];
}

const PRIMITIVE_RULES: Record<string, BuiltinRule> = {
  boolean: { content: '("true" | "false")', deps: [] },
  'decimal-part': { content: '[0-9]{1,16}', deps: [] },
  'integral-part': { content: '[0] | [1-9] [0-9]{0,15}', deps: [] },
  number: { content: '("-"? integral-part) ("." decimal-part)? ([eE] [-+]? integral-part)?', deps: ['integral-part', 'decimal-part'] },
  integer: { content: '("-"? integral-part)', deps: ['integral-part'] },
  value: { content: 'object | array | string | number | boolean | null', deps: ['object', 'array', 'string', 'number', 'boolean', 'null'] },
  object: { content: '"{" space ( string ":" space value ("," space string ":" space value)* )? space "}"', deps: ['string', 'value'] },
  array: { content: '"[" space ( value ("," space value)* )? space "]"', deps: ['value'] },
  uuid: { content: '"\\"" [0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12} "\\""', deps: [] },
  char: { content: '[^"\\\\\\x7F\\x00-\\x1F] | [\\\\] (["\\\\bfnrt] | "u" [0-9a-fA-F]{4})', deps: [] },
  string: { content: '"\\"" char* "\\""', deps: ['char'] },
  null: { content: '"null"', deps: [] },
};

const STRING_FORMAT_RULES: Record<string, BuiltinRule> = {
  date: { content: '[0-9]{4} "-" ( "0" [1-9] | "1" [0-2] ) "-" ( "0" [1-9] | [1-2] [0-9] | "3" [0-1] )', deps: [] },
  time: { content: '([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{3} )? ( "Z" | ( "+" | "-" ) ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] )', deps: [] },
  'date-time': { content: 'date "T" time', deps: ['date', 'time'] },
  'date-string': { content: '"\\"" date "\\""', deps: ['date'] },
  'time-string': { content: '"\\"" time "\\""', deps: ['time'] },
  'date-time-string': { content: '"\\"" date-time "\\""', deps: ['date-time'] },
};

const has = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);
const RESERVED = new Set(['root', ...Object.keys(PRIMITIVE_RULES), ...Object.keys(STRING_FORMAT_RULES)]);
const LITERAL_ESCAPES: Record<string, string> = { '\r': '\\r', '\n': '\\n', '"': '\\"', '-': '\\-', ']': '\\]', '\\': '\\\\' };

/** A GBNF string literal for `s` (format_literal). */
export function gbnfLiteral(s: string): string {
  return `"${s.replace(/[\r\n"\\]/g, (c) => LITERAL_ESCAPES[c])}"`;
}

/** gbnf_escape_length: the length of a GBNF escape at pattern[pos] (0 if none). */
function gbnfEscapeLength(p: string, pos: number): number {
  if (pos + 1 >= p.length || p[pos] !== '\\') return 0;
  let nHex = 0;
  switch (p[pos + 1]) {
    case 'x': nHex = 2; break;
    case 'u': nHex = 4; break;
    case 'U': nHex = 8; break;
    case 't': case 'r': case 'n': case '\\': case '"': case '[': case ']': return 2;
    default: return 0;
  }
  if (pos + 2 + nHex > p.length) return 0;
  for (let i = pos + 2; i < pos + 2 + nHex; i++) if (!/[0-9a-fA-F]/.test(p[i])) return 0;
  return 2 + nHex;
}

const NON_LITERAL = new Set('|.()[]{}*+?^$');
const ESCAPED_IN_REGEX_NOT_LITERAL = new Set('^$.[](){}|*+?');
const MAX_PATTERN_DEPTH = 100;

class UnsupportedPattern extends Error {}
class InvalidPattern extends Error {}

/** JSON text as nlohmann::json::dump writes it (compact). */
const dump = (v: Json) => JSON.stringify(v);

// ---------------------------------------------------------------------------------------------
// The converter (common_schema_converter).

class SchemaConverter {
  private rules = new Map<string, string>([['space', SPACE_RULE]]);
  private readonly refs = new Map<string, Json>();
  private readonly resolving = new Set<string>();
  readonly errors: string[] = [];
  readonly warnings: string[] = [];

  addRule(name: string, rule: string): string {
    const esc = name.replace(/[^a-zA-Z0-9-]+/g, '-');
    if (!this.rules.has(esc) || this.rules.get(esc) === rule) {
      this.rules.set(esc, rule);
      return esc;
    }
    let i = 0;
    while (this.rules.has(esc + i) && this.rules.get(esc + i) !== rule) i++;
    const key = esc + i;
    this.rules.set(key, rule);
    return key;
  }

  private unionRule(name: string, alts: Json[]): string {
    return alts.map((a, i) => this.visit(a, name + (name === '' ? 'alternative-' : '-') + i)).join(' | ');
  }

  private visitPattern(pattern: string, name: string): string {
    const snapshot = new Map(this.rules);
    try {
      return this.patternToRule(pattern, name);
    } catch (e) {
      this.rules = snapshot;
      if (e instanceof UnsupportedPattern) {
        this.warnings.push(`pattern ${pattern} is not supported (${e.message}), accepting any string`);
        return this.addRule(name, this.addPrimitive('string', PRIMITIVE_RULES.string));
      }
      if (e instanceof InvalidPattern) {
        this.errors.push(`Invalid pattern ${pattern}: ${e.message}`);
        return '';
      }
      throw e;
    }
  }

  private patternToRule(pattern: string, name: string): string {
    if (pattern.length < 2 || pattern[0] !== '^' || pattern[pattern.length - 1] !== '$') throw new UnsupportedPattern("not anchored with '^' and '$'");
    const sub = pattern.slice(1, -1);
    const subRuleIds = new Map<string, string>();
    let i = 0;
    const length = sub.length;
    let depth = 0;
    type Piece = [string, boolean]; // [text, is_literal]
    const toRule = ([s, lit]: Piece) => (lit ? `"${s}"` : s);
    const getDot = () => this.addRule('dot', '[^\\x0A\\x0D]');

    const transform = (): Piece => {
      const seq: Piece[] = [];
      const joinSeq = (): Piece => {
        const ret: Piece[] = [];
        let literal = '';
        const flush = () => {
          if (literal === '') return;
          ret.push([literal, true]);
          literal = '';
        };
        for (const item of seq) {
          if (item[1]) literal += item[0];
          else {
            flush();
            ret.push(item);
          }
        }
        flush();
        return [ret.map(toRule).join(' '), false];
      };
      while (i < length) {
        const c = sub[i];
        if (c === '.') {
          seq.push([getDot(), false]);
          i++;
        } else if (c === '(') {
          i++;
          if (i < length && sub[i] === '?') {
            if (i + 1 < length && sub[i + 1] === ':') i += 2;
            else throw new UnsupportedPattern('unsupported group syntax');
          }
          depth++;
          if (depth > MAX_PATTERN_DEPTH) throw new UnsupportedPattern('pattern nesting too deep');
          seq.push([`(${toRule(transform())})`, false]);
        } else if (c === ')') {
          i++;
          if (depth === 0) throw new InvalidPattern('unbalanced parentheses');
          depth--;
          return joinSeq();
        } else if (c === '^' || c === '$') {
          throw new UnsupportedPattern('anchor inside the pattern');
        } else if (c === '[') {
          let sq = c;
          i++;
          while (i < length && sub[i] !== ']') {
            if (sub[i] === '\\') {
              const n = gbnfEscapeLength(sub, i);
              if (n === 0) throw new UnsupportedPattern(`unsupported escape in character class: ${sub.slice(i, i + 2)}`);
              sq += sub.slice(i, i + n);
              i += n;
            } else sq += sub[i++];
          }
          if (i >= length) throw new InvalidPattern('unterminated character class');
          sq += ']';
          i++;
          seq.push([sq, false]);
        } else if (c === '|') {
          seq.push(['|', false]);
          i++;
        } else if (c === '*' || c === '+' || c === '?') {
          if (seq.length === 0) throw new InvalidPattern('nothing to repeat');
          seq[seq.length - 1] = [toRule(seq[seq.length - 1]) + c, false];
          i++;
        } else if (c === '{') {
          let curly = c;
          i++;
          while (i < length && sub[i] !== '}') curly += sub[i++];
          if (i >= length) throw new UnsupportedPattern('unterminated curly brackets');
          curly += '}';
          i++;
          const nums = curly.slice(1, -1).split(',');
          let min = 0, max = INT_MAX;
          if (nums.length !== 1 && nums.length !== 2) throw new UnsupportedPattern('wrong number of values in curly brackets');
          const stoi = (s: string) => {
            const m = /^\s*([+-]?\d+)/.exec(s);
            if (!m) throw new UnsupportedPattern('invalid number in curly brackets');
            return Number(m[1]);
          };
          if (nums.length === 1) min = max = stoi(nums[0]);
          else {
            if (nums[0] !== '') min = stoi(nums[0]);
            if (nums[1] !== '') max = stoi(nums[1]);
          }
          if (seq.length === 0) throw new InvalidPattern('nothing to repeat');
          const last = seq[seq.length - 1];
          let [s] = last;
          const lit = last[1];
          if (!lit) {
            let id = subRuleIds.get(s);
            if (id === undefined) {
              subRuleIds.set(s, '');
              id = this.addRule(`${name}-${subRuleIds.size}`, s);
              subRuleIds.set(s, id);
            }
            s = id;
          }
          seq[seq.length - 1] = [buildRepetition(lit ? `"${s}"` : s, min, max, ''), false];
        } else {
          let literal = '';
          const nonLit = (x: string) => NON_LITERAL.has(x);
          while (i < length) {
            if (sub[i] === '\\') {
              if (i === length - 1) throw new InvalidPattern('trailing backslash');
              const next = sub[i + 1];
              if (ESCAPED_IN_REGEX_NOT_LITERAL.has(next)) {
                i++;
                literal += sub[i++];
              } else {
                const n = gbnfEscapeLength(sub, i);
                if (n === 0) throw new UnsupportedPattern(`unsupported escape: ${sub.slice(i, i + 2)}`);
                literal += sub.slice(i, i + n);
                i += n;
              }
            } else if (sub[i] === '"') {
              literal += '\\"';
              i++;
            } else if (!nonLit(sub[i]) && (i === length - 1 || literal === '' || sub[i + 1] === '.' || !nonLit(sub[i + 1]))) {
              literal += sub[i++];
            } else break;
          }
          if (literal === '') throw new UnsupportedPattern(`unsupported character: ${c}`);
          seq.push([literal, true]);
        }
      }
      return joinSeq();
    };
    const rule = toRule(transform());
    if (depth !== 0) throw new InvalidPattern('unbalanced parentheses');
    return this.addRule(name, `"\\"" (${rule}) "\\""`);
  }

  /** A JSON string that is none of `strings` (_not_strings). */
  private notStrings(strings: string[]): string {
    interface Node {
      children: Map<string, Node>;
      end: boolean;
    }
    const root: Node = { children: new Map(), end: false };
    for (const s of strings) {
      let n = root;
      for (const c of new TextEncoder().encode(s)) {
        const k = String.fromCharCode(c);
        let next = n.children.get(k);
        if (!next) n.children.set(k, (next = { children: new Map(), end: false }));
        n = next;
      }
      n.end = true;
    }
    const charRule = this.addPrimitive('char', PRIMITIVE_RULES.char);
    let out = '["] ( ';
    const visit = (node: Node) => {
      let rejects = '';
      let first = true;
      for (const k of [...node.children.keys()].sort()) {
        const child = node.children.get(k)!;
        rejects += k;
        if (first) first = false;
        else out += ' | ';
        out += `[${k}]`;
        if (child.children.size > 0) {
          out += ' (';
          visit(child);
          out += ')';
        } else if (child.end) out += ` ${charRule}+`;
      }
      if (node.children.size > 0) {
        if (!first) out += ' | ';
        out += `[^"${rejects}] ${charRule}*`;
      }
    };
    visit(root);
    out += ' )';
    if (!root.end) out += '?';
    out += ' ["]';
    return out;
  }

  private resolveRef(ref: string): string {
    const hash = ref.indexOf('#');
    const fragment = hash >= 0 ? ref.slice(hash + 1) : ref;
    let name = 'ref' + fragment.replace(/[^a-zA-Z0-9-]+/g, '-');
    if (!this.rules.has(name) && !this.resolving.has(ref)) {
      this.resolving.add(ref);
      name = this.visit(this.refs.get(ref) ?? null, name);
      this.resolving.delete(ref);
    }
    return name;
  }

  private objectRule(properties: [string, Json][], required: Set<string>, name: string, additional: Json | undefined): string {
    const requiredProps: string[] = [];
    const optionalProps: string[] = [];
    const kvNames = new Map<string, string>();
    const propNames: string[] = [];
    const dash = name === '' ? '' : '-';
    for (const [prop, schema] of properties) {
      const propRule = this.visit(schema, name + dash + prop);
      kvNames.set(prop, this.addRule(`${name}${dash}${prop}-kv`, `${gbnfLiteral(dump(prop))} space ":" space ${propRule}`));
      if (required.has(prop)) requiredProps.push(prop);
      else optionalProps.push(prop);
      propNames.push(prop);
    }
    if (additional === true || isObj(additional)) {
      const subName = `${name}${dash}additional`;
      const valueRule = isObj(additional) ? this.visit(additional, `${subName}-value`) : this.addPrimitive('value', PRIMITIVE_RULES.value);
      const keyRule = propNames.length === 0 ? this.addPrimitive('string', PRIMITIVE_RULES.string) : this.addRule(`${subName}-k`, this.notStrings(propNames));
      kvNames.set('*', this.addRule(`${subName}-kv`, `${keyRule} ":" space ${valueRule}`));
      optionalProps.push('*');
    }
    if (requiredProps.length === 0 && optionalProps.length === 0) return '"{" space "}"';
    let rule = '"{" space ';
    rule += requiredProps.map((p) => kvNames.get(p)!).join(' "," space ');
    if (optionalProps.length > 0) {
      rule += ' (';
      if (requiredProps.length > 0) rule += ' "," space ( ';
      const recursiveRefs = (ks: string[], firstOptional: boolean): string => {
        if (ks.length === 0) return '';
        const k = ks[0];
        const kv = kvNames.get(k)!;
        const commaRef = `( "," space ${kv} )`;
        let res = firstOptional ? commaRef + (k === '*' ? '*' : '?') : kv + (k === '*' ? ` ${commaRef}*` : '');
        if (ks.length > 1) res += ' ' + this.addRule(`${name}${dash}${k}-rest`, recursiveRefs(ks.slice(1), true));
        return res;
      };
      rule += optionalProps.map((_, i) => recursiveRefs(optionalProps.slice(i), false)).join(' | ');
      if (requiredProps.length > 0) rule += ' )';
      rule += ' )?';
    }
    return rule + ' space "}"';
  }

  addPrimitive(name: string, rule: BuiltinRule): string {
    const n = this.addRule(name, rule.content);
    for (const dep of rule.deps) {
      const r = PRIMITIVE_RULES[dep] ?? STRING_FORMAT_RULES[dep];
      if (!r) {
        this.errors.push(`Rule ${dep} not known`);
        continue;
      }
      if (!this.rules.has(dep)) this.addPrimitive(dep, r);
    }
    return n;
  }

  /** resolve_refs: record the target of every local $ref ("#/..."); remote refs are errors. */
  resolveRefs(schema: Json): void {
    const visitRefs = (n: Json) => {
      if (Array.isArray(n)) n.forEach(visitRefs);
      else if (isObj(n)) {
        if (has(n, '$ref')) {
          const ref = n.$ref;
          if (typeof ref !== 'string') {
            this.errors.push(`Unsupported ref: ${dump(ref)}`);
            return;
          }
          if (this.refs.has(ref)) return;
          if (!ref.startsWith('#/')) {
            this.errors.push(`Unsupported ref: ${ref} (only references into the same schema, "#/...", are supported)`);
            return;
          }
          let target: Json = schema;
          const tokens = ref.slice(ref.indexOf('#') + 1).split('/');
          for (let i = 1; i < tokens.length; i++) {
            const sel = tokens[i];
            if (isObj(target) && has(target, sel)) target = target[sel];
            else if (Array.isArray(target) && /^\d+$/.test(sel) && Number(sel) < target.length) target = target[Number(sel)];
            else {
              this.errors.push(`Error resolving ref ${ref}: ${sel} not in ${dump(target)}`);
              return;
            }
          }
          this.refs.set(ref, target);
        } else for (const k of Object.keys(n)) visitRefs(n[k]);
      }
    };
    visitRefs(schema);
  }

  visit(schema: Json, name: string): string {
    if (!isObj(schema)) {
      if (schema === true) return this.addRule(name === '' ? 'root' : name, this.addPrimitive('value', PRIMITIVE_RULES.value));
      this.errors.push(`Unrecognized schema: ${dump(schema)}`);
      return '';
    }
    const type = schema.type;
    const typeNull = type === undefined || type === null;
    const format = typeof schema.format === 'string' ? schema.format : '';
    const ruleName = RESERVED.has(name) ? `${name}-` : name === '' ? 'root' : name;

    if (has(schema, '$ref')) return this.addRule(ruleName, this.resolveRef(String(schema.$ref)));
    if (has(schema, 'oneOf') || has(schema, 'anyOf')) {
      const alts = (has(schema, 'oneOf') ? schema.oneOf : schema.anyOf) as Json;
      return this.addRule(ruleName, this.unionRule(name, Array.isArray(alts) ? alts : []));
    }
    if (Array.isArray(type)) return this.addRule(ruleName, this.unionRule(name, type.map((t) => ({ ...schema, type: t }))));
    if (has(schema, 'const')) return this.addRule(ruleName, gbnfLiteral(dump(schema.const)));
    if (has(schema, 'enum')) {
      const values = Array.isArray(schema.enum) ? schema.enum : [];
      return this.addRule(ruleName, `(${values.map((v) => gbnfLiteral(dump(v))).join(' | ')})`);
    }
    if ((typeNull || type === 'object') && (has(schema, 'properties') || (has(schema, 'additionalProperties') && schema.additionalProperties !== true))) {
      const required = new Set<string>();
      if (Array.isArray(schema.required)) for (const r of schema.required) if (typeof r === 'string') required.add(r);
      const props = isObj(schema.properties) ? Object.entries(schema.properties) : [];
      return this.addRule(ruleName, this.objectRule(props, required, name, has(schema, 'additionalProperties') ? schema.additionalProperties : undefined));
    }
    if ((typeNull || type === 'object' || type === 'string') && Array.isArray(schema.allOf)) {
      const required = new Set<string>();
      const props: [string, Json][] = [];
      const enumCounts = new Map<string, number>();
      const addComponent = (comp: Json, isRequired: boolean) => {
        if (!isObj(comp)) return;
        if (has(comp, '$ref')) addComponent(this.refs.get(String(comp.$ref)) ?? null, isRequired);
        else if (isObj(comp.properties)) {
          for (const [k, v] of Object.entries(comp.properties)) {
            props.push([k, v]);
            if (isRequired) required.add(k);
          }
        } else if (Array.isArray(comp.enum)) {
          for (const v of comp.enum) {
            const r = gbnfLiteral(dump(v));
            enumCounts.set(r, (enumCounts.get(r) ?? 0) + 1);
          }
        }
      };
      for (const t of schema.allOf) {
        if (isObj(t) && Array.isArray(t.anyOf)) for (const tt of t.anyOf) addComponent(tt, false);
        else addComponent(t, true);
      }
      if (enumCounts.size > 0) {
        const inter = [...enumCounts.keys()].sort().filter((k) => enumCounts.get(k) === (schema.allOf as Json[]).length);
        if (inter.length > 0) return this.addRule(ruleName, `(${inter.join(' | ')})`);
      }
      return this.addRule(ruleName, this.objectRule(props, required, name, undefined));
    }
    if ((typeNull || type === 'array') && (has(schema, 'items') || has(schema, 'prefixItems'))) {
      const items = has(schema, 'items') ? schema.items : schema.prefixItems;
      const dash = name === '' ? '' : '-';
      if (Array.isArray(items)) {
        let rule = '"[" space ';
        rule += items.map((it, i) => this.visit(it, `${name}${dash}tuple-${i}`)).join(' "," space ');
        return this.addRule(ruleName, rule + ' space "]"');
      }
      const itemRule = this.visit(items, `${name}${dash}item`);
      const min = typeof schema.minItems === 'number' ? Math.trunc(schema.minItems) : 0;
      const max = Number.isInteger(schema.maxItems) ? (schema.maxItems as number) : INT_MAX;
      return this.addRule(ruleName, `"[" space ${buildRepetition(itemRule, min, max, '"," space')} space "]"`);
    }
    if ((typeNull || type === 'string') && has(schema, 'pattern')) return this.visitPattern(String(schema.pattern), ruleName);
    if ((typeNull || type === 'string') && /^uuid[1-5]?$/.test(format)) return this.addPrimitive(ruleName === 'root' ? 'root' : format, PRIMITIVE_RULES.uuid);
    if ((typeNull || type === 'string') && STRING_FORMAT_RULES[`${format}-string`]) {
      const prim = `${format}-string`;
      return this.addRule(ruleName, this.addPrimitive(prim, STRING_FORMAT_RULES[prim]));
    }
    if (type === 'string' && (has(schema, 'minLength') || has(schema, 'maxLength'))) {
      const charRule = this.addPrimitive('char', PRIMITIVE_RULES.char);
      const min = typeof schema.minLength === 'number' ? Math.trunc(schema.minLength) : 0;
      const max = typeof schema.maxLength === 'number' ? Math.trunc(schema.maxLength) : INT_MAX;
      return this.addRule(ruleName, `"\\"" ${buildRepetition(charRule, min, max)} "\\""`);
    }
    if (type === 'integer' && ['minimum', 'exclusiveMinimum', 'maximum', 'exclusiveMaximum'].some((k) => has(schema, k))) {
      const num = (k: string) => Math.trunc(Number(schema[k]));
      let min = -Infinity, max = Infinity;
      if (has(schema, 'minimum')) min = num('minimum');
      else if (has(schema, 'exclusiveMinimum')) min = num('exclusiveMinimum') + 1;
      if (has(schema, 'maximum')) max = num('maximum');
      else if (has(schema, 'exclusiveMaximum')) max = num('exclusiveMaximum') - 1;
      const out: string[] = ['('];
      buildMinMaxInt(min, max, out);
      out.push(')');
      return this.addRule(ruleName, out.join(''));
    }
    if (Object.keys(schema).length === 0 || type === 'object') return this.addRule(ruleName, this.addPrimitive('object', PRIMITIVE_RULES.object));
    if (typeNull) return this.addRule(ruleName, this.addPrimitive('value', PRIMITIVE_RULES.value));
    if (typeof type !== 'string' || !PRIMITIVE_RULES[type]) {
      this.errors.push(`Unrecognized schema: ${dump(schema)}`);
      return '';
    }
    return this.addPrimitive(ruleName === 'root' ? 'root' : type, PRIMITIVE_RULES[type]);
  }

  format(): string {
    return [...this.rules.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((k) => `${k} ::= ${this.rules.get(k)}\n`).join('');
  }
}

/**
 * GBNF for a JSON schema (json_schema_to_grammar). Throws UsageError listing what the schema uses
 * that cannot be converted; `warnings` receives what was loosened (an unsupported regex pattern).
 */
export function jsonSchemaToGbnf(schema: unknown, warnings?: string[]): string {
  const c = new SchemaConverter();
  const copy = JSON.parse(JSON.stringify(schema ?? null)) as Json;
  c.resolveRefs(copy);
  c.visit(copy, '');
  if (c.errors.length > 0) throw new UsageError(`JSON schema conversion failed: ${c.errors.join('; ')}`);
  warnings?.push(...c.warnings);
  return c.format();
}

/** Any JSON object: OpenAI's response_format {type: "json_object"} (llama.cpp's server uses the same). */
export const JSON_OBJECT_GBNF = jsonSchemaToGbnf({ type: 'object' });
