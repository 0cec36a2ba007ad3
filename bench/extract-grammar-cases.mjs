// Extracts llama.cpp's JSON-schema → GBNF test cases (tests/test-json-schema-to-grammar.cpp) into
// tests/grammar/fixtures/json-schema-cases.json: { status, name, schema, grammar } each.
//   node bench/extract-grammar-cases.mjs /tmp/llama.cpp
import { readFileSync, writeFileSync } from 'node:fs';

const root = process.argv[2] ?? '/tmp/llama.cpp';
const src = readFileSync(`${root}/tests/test-json-schema-to-grammar.cpp`, 'utf8');
// a C++ string: R"""( ... )""" or "..." (with \" escapes)
const str = String.raw`(?:R"""\(([\s\S]*?)\)"""|"((?:[^"\\]|\\.)*)")`;
const re = new RegExp(String.raw`test\(\{\s*(SUCCESS|FAILURE),\s*"((?:[^"\\]|\\.)*)",\s*${str},\s*${str}\s*\}\);`, 'g');
const unescape = (s) => JSON.parse(`"${s}"`);
const trim = (s) => s.trim().replace(/(^|\n)[ \t]+/g, '$1');
const cases = [];
for (const m of src.matchAll(re)) {
  const schema = m[3] ?? unescape(m[4]);
  const grammar = m[5] ?? unescape(m[6]);
  cases.push({ status: m[1], name: unescape(m[2]), schema: schema.trim(), grammar: trim(grammar) });
}
writeFileSync('tests/grammar/fixtures/json-schema-cases.json', JSON.stringify(cases, null, 1) + '\n');
console.log(`${cases.length} cases`);

// llama.cpp's matcher cases (tests/test-grammar-integration.cpp): test_grammar / test_schema calls
// with their passing and failing strings, into tests/grammar/fixtures/grammar-integration-cases.json:
// { kind: 'grammar' | 'schema', name, text, pass, fail }; a string with token(N) parts is a list
// of strings and token ids.
const integ = readFileSync(`${root}/tests/test-grammar-integration.cpp`, 'utf8');
function parseCall(s, at) {
  // at: index just after "test_grammar(" or "test_schema("; returns { args, end }
  let i = at;
  const args = [];
  let cur = []; // parts of the current expression (strings / {token})
  const stack = [args];
  let list = null;
  const lit = () => {
    if (s.startsWith('R"""(', i)) {
      const e = s.indexOf(')"""', i + 5);
      const v = s.slice(i + 5, e);
      i = e + 4;
      return v;
    }
    // "..." with escapes
    let j = i + 1;
    while (s[j] !== '"') j += s[j] === '\\' ? 2 : 1;
    const v = JSON.parse(s.slice(i, j + 1).replace(/\\x([0-9a-fA-F]{2})/g, '\\u00$1'));
    i = j + 1;
    return v;
  };
  const flush = (into) => {
    if (cur.length === 0) return;
    into.push(cur.every((p) => typeof p === 'string') ? cur.join('') : cur);
    cur = [];
  };
  for (;;) {
    const c = s[i];
    if (s.startsWith('//', i)) i = s.indexOf('\n', i);
    else if (c === '"' || s.startsWith('R"""(', i)) cur.push(lit());
    else if (s.startsWith('token(', i)) {
      const e = s.indexOf(')', i);
      cur.push(Number(s.slice(i + 6, e)));
      i = e + 1;
    } else if (c === '{') {
      list = [];
      stack.push(list);
      i++;
    } else if (c === '}') {
      flush(list);
      stack.pop();
      stack[stack.length - 1].push(list);
      list = null;
      i++;
    } else if (c === ',') {
      flush(stack[stack.length - 1]);
      i++;
    } else if (c === ')') {
      flush(stack[stack.length - 1]);
      return { args, end: i + 1 };
    } else i++;
  }
}
const integCases = [];
for (const m of integ.matchAll(/\b(test_grammar|test_schema)\(/g)) {
  if (integ.slice(m.index - 12, m.index) === 'static void ') continue; // the definitions
  const { args } = parseCall(integ, m.index + m[0].length);
  if (args.length !== 4) throw new Error(`unexpected call at ${m.index}: ${JSON.stringify(args).slice(0, 200)}`);
  integCases.push({ kind: m[1] === 'test_grammar' ? 'grammar' : 'schema', name: args[0], text: args[1], pass: args[2], fail: args[3] });
}
writeFileSync('tests/grammar/fixtures/grammar-integration-cases.json', JSON.stringify(integCases, null, 1) + '\n');
console.log(`${integCases.length} integration cases`);
