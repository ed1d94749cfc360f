// The option names each entry point takes. An unknown name is a TypeError,
// never ignored: a misspelt or another language's option (`dictionary` when
// decoding) would otherwise change nothing, silently.

import type { DictionaryLike } from './common.js';

/** Options of `encode`, `Encoder`, `encodeStream` (the sync options apply to streams only). */
export const ENCODER_OPTIONS: ReadonlySet<string> = new Set(['dictionary', 'maxDepth', 'undefined', 'classInstances', 'syncFrames', 'syncBytes']);
/** `StreamEncoder` takes the encoder's options and `output`. */
export const STREAM_ENCODER_OPTIONS: ReadonlySet<string> = new Set([...ENCODER_OPTIONS, 'output']);
/** Options of `decode`, `Decoder`, `decodeStream`, `joinStream`, `StreamDecoder` (`join`: streams only). */
export const DECODER_OPTIONS: ReadonlySet<string> = new Set(['dictionaries', 'maxDepth', 'exactFloats', 'maps', 'dates', 'integers', 'binaryViews', 'join']);

const HINTS: Record<string, string> = {
  'decode:dictionary': 'decoding takes `dictionaries` (a Dictionary or an array of them)',
  'encode:dictionaries': 'encoding takes `dictionary` (one Dictionary)',
};

/** Throws a TypeError for a key of `options` not in `known` (keys whose value is `undefined` count as absent). */
export function checkOptions(options: object | null | undefined, known: ReadonlySet<string>, what: string): void {
  if (options === undefined || options === null) return;
  if (typeof options !== 'object') throw new TypeError(`${what} options must be an object, not ${typeof options}`);
  for (const k of Object.keys(options)) {
    if (known.has(k) || (options as Record<string, unknown>)[k] === undefined) continue;
    const hint = HINTS[`${what}:${k}`];
    throw new TypeError(`unknown ${what} option '${k}'` + (hint ? `: ${hint}` : ` (known: ${[...known].join(', ')})`));
  }
}

/** The `dictionaries` option as a list: absent, one dictionary, or an iterable of them. */
export function dictionaryList(d: DictionaryLike | Iterable<DictionaryLike> | null | undefined): Iterable<DictionaryLike> {
  if (d === undefined || d === null) return [];
  if (typeof (d as DictionaryLike).id === 'bigint') return [d as DictionaryLike];
  if (typeof (d as Iterable<DictionaryLike>)[Symbol.iterator] === 'function') return d as Iterable<DictionaryLike>;
  throw new TypeError('dictionaries must be a Dictionary or an array of them');
}
