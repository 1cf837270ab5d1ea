/**
 * A tiny llama model for the interop test, made offline (no model hub is needed): one layer that adds nothing, a
 * byte-level BPE vocabulary (every byte is a token, so any prompt tokenizes), Qwen2.5's chat template (taken from the
 * llama.cpp source that is built, so tool calls use a format llama.cpp knows), and an output layer that ranks the next
 * token by the last one alone (a bigram model).
 *
 * Why ranked, not random: the test is about what the server does with HydraFlow's schemas — compile them into a
 * grammar and constrain the output to them — not about what a model says. Under a grammar the model picks the
 * highest-ranked token the grammar allows, so its answers are short, valid and the same on every run: strings end as
 * soon as they may (`"` ranks high), arrays stay empty (`]`), integers are 7, and an enum takes the value whose first
 * letter ranks highest. Without a grammar it opens a tool call (the token `<tool_call>` + newline, llama.cpp's trigger
 * for Qwen's tool calls), and after the `>` that closes one it ends its turn. The order of the letters decides which
 * submit tool a grooming call picks: `preferTool` chooses.
 */
import { readFileSync } from 'node:fs';
import { writeGguf, type GgufTensor } from './gguf';

const N_EMBD = 16;
/** Logit gap between two ranks: at llama.cpp's default temperature (0.8) the lower one has a chance of e^-12.5. */
const GAP = 10;
const N_FF = 16;
const N_HEAD = 2;
export const CONTEXT_LENGTH = 65_536;

/** GPT-2's byte → printable character map (the token text of each byte in a byte-level BPE vocabulary). */
function byteTokens(): string[] {
  const printable = (from: string, to: string) =>
    Array.from({ length: to.charCodeAt(0) - from.charCodeAt(0) + 1 }, (_, i) => from.charCodeAt(0) + i);
  const direct = new Set([...printable('!', '~'), ...printable('¡', '¬'), ...printable('®', 'ÿ')]);
  const tokens: string[] = [];
  let next = 256;
  for (let b = 0; b < 256; b++) tokens.push(String.fromCodePoint(direct.has(b) ? b : next++));
  return tokens;
}

const EOS = '<|im_end|>';
const SPECIAL = [EOS, '<|im_start|>'];
const TOOL_CALL = '<tool_call>\n';

/**
 * Logit of each token after any token without a context of its own (below), highest first: the listed tokens, then
 * every other printable ASCII character in code order, then the end of the turn, then white space. `preferTool` decides
 * between submit_verdict and submit_summary: the letter after "submit_" that ranks higher wins.
 */
function ranking(preferTool: 'verdict' | 'summary'): Map<string, number> {
  const order = [
    TOOL_CALL,
    '"', // strings end as soon as they may
    'b', // an enum's `blocked` (grooming's summary; then consistent with a non-null blocker_reason)
    // Tool names: `s` (search, search_issues, submit_…), then `u` (submit_…), then `v` (verdict) or `s` (summary).
    ...(preferTool === 'verdict' ? ['v', 's', 'u'] : ['s', 'u']),
    '7', // integers and scores
    'f', // booleans
    '[', // an array rather than null
    ']',
    '}',
    ...Array.from({ length: 0x7f - 0x21 }, (_, i) => String.fromCharCode(0x21 + i)),
    EOS,
  ];
  const scores = new Map<string, number>();
  for (const token of order) if (!scores.has(token)) scores.set(token, (order.length - scores.size) * GAP);
  for (const space of [' ', '\n', '\t', '\r']) scores.set(space, -GAP);
  return scores;
}

/** Tokens that rank first after a given last token, whatever the ranking says. */
const FIRST_AFTER: ReadonlyMap<string, string> = new Map([
  ['>', EOS], // `</tool_call>` closes the call: end the turn rather than open another one
  ['[', ']'], // arrays stay empty when they may
  ['}', '<'], // one tool call per turn: `</tool_call>` rather than `,` and another call
  [TOOL_CALL, '{'], // the call's JSON
]);

/** The Qwen2.5 chat template as the llama.cpp source ships it. */
export function qwenTemplate(llamaCppSource: string): string {
  return readFileSync(`${llamaCppSource}/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja`, 'utf8');
}

/** The bytes of the model file. */
export function tinyModel(options: { chatTemplate: string; preferTool: 'verdict' | 'summary' }): Buffer {
  const bytes = byteTokens();
  // Each token: its text in the vocabulary (byte-level encoded, but for the control tokens) and what it stands for.
  const byteLevel = (text: string) => [...Buffer.from(text, 'utf8')].map((b) => bytes[b]).join('');
  const texts = [
    ...bytes.map((text, b) => ({ text, char: String.fromCharCode(b) })),
    ...SPECIAL.map((t) => ({ text: t, char: t })),
    { text: byteLevel(TOOL_CALL), char: TOOL_CALL },
  ];
  const types = texts.map((t) => (SPECIAL.includes(t.text) ? 3 : 1)); // 3 control, 1 normal
  const scores = ranking(options.preferTool);
  const nVocab = texts.length;

  const tensor = (name: string, dims: number[], fill: (i: number) => number = () => 0): GgufTensor => {
    const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
    for (let i = 0; i < data.length; i++) data[i] = fill(i);
    return { name, dims, data };
  };
  // The layer adds nothing, so the last hidden state is the last token's embedding: a unit vector per context
  // (0: most tokens; 1, 2, …: the tokens of FIRST_AFTER). RMS-normed it is √N_EMBD times that vector, so output row t
  // holds, at column c, token t's logit in context c divided by √N_EMBD.
  const afters = [...FIRST_AFTER.keys()];
  const contextOf = (token: number) => afters.indexOf(texts[token]!.char) + 1;
  const top = Math.max(...scores.values()) + GAP;
  const logit = (token: string, context: number) =>
    context > 0 && FIRST_AFTER.get(afters[context - 1]!) === token ? top : (scores.get(token) ?? -2 * GAP);
  const norm = Math.sqrt(N_EMBD);
  const tensors: GgufTensor[] = [
    tensor('token_embd.weight', [N_EMBD, nVocab], (i) => (i % N_EMBD === contextOf(Math.floor(i / N_EMBD)) ? 1 : 0)),
    tensor('output_norm.weight', [N_EMBD], () => 1),
    tensor('output.weight', [N_EMBD, nVocab], (i) => logit(texts[Math.floor(i / N_EMBD)]!.char, i % N_EMBD) / norm),
    tensor('blk.0.attn_norm.weight', [N_EMBD], () => 1),
    tensor('blk.0.attn_q.weight', [N_EMBD, N_EMBD]),
    tensor('blk.0.attn_k.weight', [N_EMBD, N_EMBD]),
    tensor('blk.0.attn_v.weight', [N_EMBD, N_EMBD]),
    tensor('blk.0.attn_output.weight', [N_EMBD, N_EMBD]),
    tensor('blk.0.ffn_norm.weight', [N_EMBD], () => 1),
    tensor('blk.0.ffn_gate.weight', [N_EMBD, N_FF]),
    tensor('blk.0.ffn_up.weight', [N_EMBD, N_FF]),
    tensor('blk.0.ffn_down.weight', [N_FF, N_EMBD]),
  ];
  return writeGguf(
    {
      'general.architecture': { type: 'string', value: 'llama' },
      'general.name': { type: 'string', value: 'hydraflow-interop' },
      'general.file_type': { type: 'u32', value: 0 },
      'llama.context_length': { type: 'u32', value: CONTEXT_LENGTH },
      'llama.embedding_length': { type: 'u32', value: N_EMBD },
      'llama.block_count': { type: 'u32', value: 1 },
      'llama.feed_forward_length': { type: 'u32', value: N_FF },
      'llama.attention.head_count': { type: 'u32', value: N_HEAD },
      'llama.attention.head_count_kv': { type: 'u32', value: N_HEAD },
      'llama.rope.dimension_count': { type: 'u32', value: N_EMBD / N_HEAD },
      'llama.attention.layer_norm_rms_epsilon': { type: 'f32', value: 1e-5 },
      'tokenizer.ggml.model': { type: 'string', value: 'gpt2' },
      'tokenizer.ggml.pre': { type: 'string', value: 'default' },
      'tokenizer.ggml.tokens': { type: 'string[]', value: texts.map((t) => t.text) },
      'tokenizer.ggml.token_type': { type: 'i32[]', value: types },
      'tokenizer.ggml.merges': { type: 'string[]', value: [] },
      'tokenizer.ggml.bos_token_id': { type: 'u32', value: nVocab - 2 },
      'tokenizer.ggml.eos_token_id': { type: 'u32', value: nVocab - 3 },
      'tokenizer.ggml.add_bos_token': { type: 'bool', value: false },
      'tokenizer.chat_template': { type: 'string', value: options.chatTemplate },
    },
    tensors,
  );
}
