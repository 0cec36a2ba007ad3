// The BPE pre-tokenizers: for each `tokenizer.ggml.pre` name, the regexes that split text into
// words and the flags that go with it. Names, regexes and flags are llama.cpp's
// (src/llama-vocab.cpp: `llm_tokenizer_bpe` for the regexes, `llama_vocab::impl::load` for the
// name -> type mapping). The regexes are written exactly as llama.cpp's C++ string literals
// (C and JS share the escapes used here), because some are recognised by their exact text and
// routed to hand-written splitters (see pre-tokenize.ts).

// ---------------------------------------------------------------------------------------------
// Regex sets, one per llama.cpp LLAMA_VOCAB_PRE_TYPE_*

const GPT2_RE = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
const LLAMA3_RE = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const QWEN2_RE = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const DEEPSEEK3_RE = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";
const GPT4O_RE = "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const PORO_RE = " ?[^(\\s|.,!?…。，、।۔،)]+";
const SPLIT_NEWLINES_RE = "[^\\n]+|[\\n]+";

export const PRE_REGEXES = {
  default: [
    "[\\p{P}\\$\\+<=>\\^~\\|]+",
    GPT2_RE,
    "\\p{N}+",
    "[0-9][0-9][0-9]",
  ],
  llama3: [LLAMA3_RE],
  jais2: [
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}",
  ],
  'deepseek-llm': [
    "[\r\n]",
    "\\s?[A-Za-z\u{B5}\u{C0}-\u{D6}\u{D8}-\u{F6}\u{F8}-\u{1BA}\u{1BC}-\u{1BF}\u{1C4}-\u{293}\u{295}-\u{2AF}\u{370}-\u{373}\u{376}\u{377}\u{37B}-\u{37D}\u{37F}\u{386}\u{388}-\u{38A}\u{38C}\u{38E}-\u{3A1}\u{3A3}-\u{3F5}\u{3F7}-\u{481}\u{48A}-\u{52F}\u{531}-\u{556}\u{10A0}-\u{10C5}\u{13A0}-\u{13F5}\u{13F8}-\u{13FD}\u{1C90}-\u{1CBA}\u{1CBD}-\u{1CBF}\u{1D00}-\u{1D2B}\u{1D6B}-\u{1D77}\u{1D79}-\u{1D9A}\u{1E00}-\u{1F15}\u{1F18}-\u{1F1D}\u{1F20}-\u{1F45}\u{1F48}-\u{1F4D}\u{1F50}-\u{1F57}\u{1F59}\u{1F5B}\u{1F5D}\u{1F5F}-\u{1F7D}\u{1F80}-\u{1FB4}\u{1FB6}-\u{1FBC}\u{1FBE}\u{1FC2}-\u{1FC4}\u{1FC6}-\u{1FCC}\u{1FD0}-\u{1FD3}\u{1FD6}-\u{1FDB}\u{1FE0}-\u{1FEC}\u{1FF2}-\u{1FF4}\u{1FF6}-\u{1FFC}\u{2102}\u{2107}\u{210A}-\u{2113}\u{2115}\u{2119}-\u{211D}\u{2124}\u{2126}\u{2128}\u{212A}-\u{212D}\u{212F}-\u{2134}\u{2139}\u{213C}-\u{213F}\u{2145}-\u{2149}\u{214E}\u{2183}\u{2184}\u{2C00}-\u{2C7B}\u{2C7E}-\u{2CE4}\u{2CEB}-\u{2CEE}\u{2CF2}\u{2CF3}\u{A640}-\u{A66D}\u{A680}-\u{A69B}\u{A722}-\u{A76F}\u{A771}-\u{A787}\u{A78B}-\u{A78E}\u{AB70}-\u{ABBF}\u{FB00}-\u{FB06}\u{FB13}-\u{FB17}\u{FF21}-\u{FF3A}\u{FF41}-\u{FF5A}\u{10400}-\u{1044F}\u{104B0}-\u{104D3}\u{104D8}-\u{104FB}\u{10C80}-\u{10CB2}\u{10CC0}-\u{10CF2}\u{118A0}-\u{118DF}\u{1E900}-\u{1E943}]+",
    "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
    "\\s+$",
    "[一-龥ࠀ-一가-퟿]+",
    "\\p{N}+",
  ],
  'deepseek3-llm': [
    "\\p{N}{1,3}",
    "[一-龥぀-ゟ゠-ヿ]+",
    DEEPSEEK3_RE,
  ],
  spark2_5: [
    "\\p{N}{1,3}",
    "[一-龥぀-ゟ゠-ヿ]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+",
    "\\p{N}",
  ],
  youtu: [
    "[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+",
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  ],
  'deepseek-coder': [
    "[\r\n]",
    "\\s?\\p{L}+",
    "\\s?\\p{P}+",
    "[一-龥ࠀ-一가-퟿]+",
    "\\p{N}",
  ],
  falcon: [
    "[\\p{P}\\$\\+<=>\\^~\\|`]+",
    GPT2_RE,
    "[0-9][0-9][0-9]",
  ],
  starcoder: ["\\p{N}", GPT2_RE],
  gpt2: [GPT2_RE],
  qwen2: [QWEN2_RE],
  qwen35: [
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  ],
  poro: [PORO_RE],
  chatglm4: [LLAMA3_RE],
  viking: [PORO_RE, "\\p{N}"],
  tekken: [
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  ],
  chameleon: [
    "<sentinel:[0-9]+>",
    "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z",
    "([\\t\\n]|    |  )",
    "\\p{N}",
    "[\\p{P}!-/:-@\\[-`{-~]",
    GPT2_RE,
  ],
  gpt4o: [GPT4O_RE],
  'granite-emb-multi': [
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  ],
  'tiny-aya': [
    "\\d{1,3}(?=(?:\\d{3})*\\b)",
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  ],
  // Recognised by its text and handled by the hand-written Kimi-K2 splitter (pre-tokenize.ts).
  'kimi-k2': ["\\p{Han}+"],
  superbpe: ["\\p{N}+", "(?=(\\d{3})+(?!\\d))"],
  bailingmoe: [
    "'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",
  ],
  'seed-coder': [
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  ],
  ufakzeka: [
    "[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  ],
  'grok-2': [QWEN2_RE],
  afmoe: [
    // Recognised by its text and handled by the hand-written AFMoE digit splitter.
    "\\p{AFMoE_digits}",
    "[\u{4E00}-\u{9FFF}\u{3400}-\u{4DBF}\u{F900}-\u{FAFF}\u{3040}-\u{309F}\u{30A0}-\u{30FF}\u{FF65}-\u{FF9F}\u{2F00}-\u{2FDF}\u{E40}-\u{E7F}\u{E80}-\u{EFF}\u{1780}-\u{17FF}\u{1000}-\u{109F}\u{AA60}-\u{AA7F}\u{A9E0}-\u{A9FF}\u{AC00}-\u{D7AF}\u{1100}-\u{11FF}]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  ],
  laguna: [SPLIT_NEWLINES_RE, QWEN2_RE],
  'exaone-moe': [
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",
  ],
  // SPM-style BPE (spaces already turned into U+2581): only split on newlines, no byte encoding.
  gemma4: [SPLIT_NEWLINES_RE],
  // Same shape as gemma4, without Gemma 4's whole-newline-run fix in the BPE session.
  'sarvam-moe': [SPLIT_NEWLINES_RE],
  minicpm5: [
    "\\p{N}{1,3}",
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  ],
  whitespace: ["\\S+"],
} as const satisfies Record<string, readonly string[]>;

export type PreKind = keyof typeof PRE_REGEXES;

// ---------------------------------------------------------------------------------------------
// `tokenizer.ggml.pre` names

/** What a `tokenizer.ggml.pre` name selects. Flags not given keep the BPE defaults. */
export interface PreTokenizerSpec {
  readonly kind: PreKind;
  /** false: keep raw UTF-8 (Gemma 4 style); true: map bytes to the GPT-2 alphabet. */
  readonly byteEncode: boolean;
  /** A word found whole in the vocab is emitted as one token without merging (Llama 3). */
  readonly ignoreMerges: boolean;
  /** clean_up_tokenization_spaces when decoding. */
  readonly cleanSpaces: boolean;
  /** Default for add_bos before `tokenizer.ggml.add_bos_token` is read. */
  readonly addBos: boolean;
  /** Replace ' ' with U+2581 before splitting, and back when decoding. */
  readonly escapeWhitespaces: boolean;
  /** ChatGLM: there is no BOS unless the file names one. */
  readonly noDefaultBos: boolean;
}

type Flags = Partial<Omit<PreTokenizerSpec, 'kind'>>;
const NO_CLEAN: Flags = { cleanSpaces: false };

// name -> [kind, flags]; the order and groups follow llama_vocab::impl::load.
const PRE_NAMES: ReadonlyArray<[readonly string[], PreKind, Flags?]> = [
  [['default'], 'default'],
  [['minicpm5'], 'minicpm5', { ignoreMerges: true }],
  [['llama3', 'llama-v3', 'llama-bpe', 'falcon3', 'falcon-h1', 'pixtral', 'midm-2.0', 'lfm2', 'jina-v5-nano'], 'llama3', { ignoreMerges: true, addBos: true }],
  [['deepseek-llm'], 'deepseek-llm', NO_CLEAN],
  [['deepseek-coder'], 'deepseek-coder', NO_CLEAN],
  [['deepseek-v3'], 'deepseek3-llm', NO_CLEAN],
  [['spark2_5'], 'spark2_5', NO_CLEAN],
  [['youtu'], 'youtu', { cleanSpaces: false, ignoreMerges: true }],
  [['falcon'], 'falcon'],
  [['mpt'], 'gpt2'],
  [['starcoder'], 'starcoder'],
  [['gpt-2', 'phi-2', 'jina-es', 'jina-de', 'gigachat', 'jina-v2-es', 'jina-v2-de', 'a.x-4.0', 'mellum', 'modern-bert'], 'gpt2'],
  [['jais-2'], 'jais2'],
  [['gemma4', 'granite-embed-multi-311m'], 'gemma4', { escapeWhitespaces: true, byteEncode: false }],
  [['sarvam-moe'], 'sarvam-moe', { escapeWhitespaces: true, byteEncode: false, cleanSpaces: false }],
  [['jina-v1-en', 'jina-v2-code', 'roberta-bpe'], 'gpt2'],
  [['whitespace'], 'whitespace', { byteEncode: false }],
  [['refact'], 'starcoder'],
  [['command-r'], 'starcoder', NO_CLEAN],
  [['qwen2', 'deepseek-r1-qwen', 'kormo', 'f2llmv2'], 'qwen2', NO_CLEAN],
  [['qwen35'], 'qwen35', NO_CLEAN],
  [['stablelm2'], 'qwen2'],
  [['olmo'], 'gpt2'],
  [['dbrx'], 'llama3'],
  [['smaug-bpe'], 'llama3'],
  [['poro-chat'], 'poro', NO_CLEAN],
  [['glm4', 'chatglm-bpe'], 'chatglm4', { noDefaultBos: true }],
  [['viking'], 'viking', NO_CLEAN],
  [['jais'], 'gpt2'],
  [['tekken'], 'tekken', { cleanSpaces: false, ignoreMerges: true, addBos: true }],
  [['smollm'], 'starcoder', NO_CLEAN],
  [['codeshell'], 'starcoder'],
  [['bloom'], 'poro'],
  [['gpt3-finnish'], 'poro'],
  [['exaone'], 'starcoder'],
  [['exaone4'], 'gpt2'],
  [['exaone-moe'], 'exaone-moe'],
  [['chameleon'], 'chameleon', { addBos: true, cleanSpaces: false }],
  [['minerva-7b'], 'starcoder'],
  [['megrez'], 'qwen2'],
  [['gpt-4o', 'llama4', 'kanana2', 'talkie'], 'gpt4o', NO_CLEAN],
  [['granite-embed-multi-97m'], 'granite-emb-multi', { cleanSpaces: false, ignoreMerges: true }],
  [['tiny_aya', 'cohere2moe'], 'tiny-aya', NO_CLEAN],
  [['superbpe'], 'superbpe', NO_CLEAN],
  [['trillion'], 'gpt2', NO_CLEAN],
  [['granite-docling'], 'gpt2', NO_CLEAN],
  [['bailingmoe', 'bailingmoe2', 'llada-moe'], 'bailingmoe', NO_CLEAN],
  [['seed-coder'], 'seed-coder', NO_CLEAN],
  [['hunyuan'], 'qwen2', NO_CLEAN],
  [['hunyuan-dense', 'hy_v4', 'joyai-llm'], 'deepseek3-llm', NO_CLEAN],
  [['kimi-k2'], 'kimi-k2', NO_CLEAN],
  [['ufakzeka'], 'ufakzeka', NO_CLEAN],
  [['grok-2'], 'grok-2', NO_CLEAN],
  [['afmoe'], 'afmoe', NO_CLEAN],
  [['laguna'], 'laguna', NO_CLEAN],
  [['minimax-m2'], 'gpt4o', NO_CLEAN],
  [['solar-open'], 'qwen2', NO_CLEAN],
  [['mellum2'], 'starcoder'],
];

const BPE_DEFAULTS: Omit<PreTokenizerSpec, 'kind'> = {
  byteEncode: true, ignoreMerges: false, cleanSpaces: true, addBos: false, escapeWhitespaces: false, noDefaultBos: false,
};

const BY_NAME = new Map<string, PreTokenizerSpec>();
for (const [names, kind, flags] of PRE_NAMES) {
  for (const name of names) BY_NAME.set(name, { kind, ...BPE_DEFAULTS, ...flags });
}

/**
 * The pre-tokenizer for a `tokenizer.ggml.pre` value; a missing value means 'default' (llama.cpp
 * warns that quality will suffer). Undefined for a name llama.cpp does not know.
 */
export function preTokenizerSpec(pre: string | undefined): PreTokenizerSpec | undefined {
  return BY_NAME.get(pre === undefined || pre === '' ? 'default' : pre);
}

/** Every `tokenizer.ggml.pre` name that is supported. */
export function knownPreNames(): string[] {
  return [...BY_NAME.keys()];
}
