// The vocabulary as a byte trie, laid out in preorder so that the grammar's mask is one linear scan
// that jumps over every subtree the grammar rejects (the idea of llama.cpp's
// llama_grammar_reject_candidates, which groups candidates by their next character, done once).

/** What the grammar needs of a tokenizer: each token's output bytes and which tokens end generation. */
export interface GrammarVocab {
  readonly size: number;
  /** The bytes the token adds to the output ('' for control tokens, which the grammar never allows). */
  bytes(id: number): Uint8Array;
  isEog(id: number): boolean;
}

export interface TokenTrie {
  /** Nodes 1..n-1 in preorder (node 0 is the root): the byte on the edge into each node. */
  byte: Uint8Array;
  /** Each node's depth (root 0). */
  depth: Uint16Array;
  /** One past each node's last descendant: where the scan continues when the node is rejected. */
  end: Int32Array;
  /** The first token whose bytes end at each node (-1: none); tokenNext chains the others. */
  tokenHead: Int32Array;
  tokenNext: Int32Array; // (n_vocab)
  /** The bytes of every token, kept for checking a single token. */
  tokenBytes: Uint8Array[];
  /** Tokens that end generation (eos, eot, ...). */
  eog: Int32Array;
  maxDepth: number;
}

const tries = new WeakMap<GrammarVocab, TokenTrie>();

/** The trie of a vocabulary, built once per vocabulary object. */
export function tokenTrie(vocab: GrammarVocab): TokenTrie {
  let t = tries.get(vocab);
  if (!t) tries.set(vocab, (t = buildTrie(vocab)));
  return t;
}

function buildTrie(vocab: GrammarVocab): TokenTrie {
  const n = vocab.size;
  const tokenBytes: Uint8Array[] = new Array(n);
  const eog: number[] = [];
  const order: number[] = [];
  for (let id = 0; id < n; id++) {
    const b = vocab.bytes(id);
    tokenBytes[id] = b;
    if (vocab.isEog(id)) eog.push(id);
    else if (b.length > 0) order.push(id);
  }
  // Tokens sorted by their bytes (as latin-1 strings, whose code units order as the bytes do): a
  // preorder of the trie is then a single pass over them.
  const keys: string[] = new Array(n);
  for (const id of order) keys[id] = String.fromCharCode.apply(null, tokenBytes[id] as unknown as number[]);
  order.sort((x, y) => {
    const a = keys[x], b = keys[y];
    return a < b ? -1 : a > b ? 1 : x - y;
  });
  let cap = 1;
  for (const id of order) cap += tokenBytes[id].length;
  const byte = new Uint8Array(cap);
  const depth = new Uint16Array(cap);
  const end = new Int32Array(cap);
  const tokenHead = new Int32Array(cap).fill(-1);
  const tokenNext = new Int32Array(n).fill(-1);
  const path: number[] = [0]; // node at each depth along the current path
  let nodes = 1;
  let prev: Uint8Array = new Uint8Array(0);
  let maxDepth = 0;
  for (const id of order) {
    const b = tokenBytes[id];
    let common = 0;
    while (common < b.length && common < prev.length && b[common] === prev[common]) common++;
    // close the nodes below the shared prefix
    for (let d = prev.length; d > common; d--) end[path[d]] = nodes;
    path.length = common + 1;
    for (let d = common; d < b.length; d++) {
      byte[nodes] = b[d];
      depth[nodes] = d + 1;
      path.push(nodes);
      nodes++;
    }
    const leaf = path[b.length];
    tokenNext[id] = tokenHead[leaf];
    tokenHead[leaf] = id;
    if (b.length > maxDepth) maxDepth = b.length;
    prev = b;
  }
  for (let d = prev.length; d > 0; d--) end[path[d]] = nodes;
  end[0] = nodes;
  return {
    byte: byte.subarray(0, nodes),
    depth: depth.subarray(0, nodes),
    end: end.subarray(0, nodes),
    tokenHead: tokenHead.subarray(0, nodes),
    tokenNext,
    tokenBytes,
    eog: Int32Array.from(eog),
    maxDepth,
  };
}
