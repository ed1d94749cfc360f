// Decode-only entry point: `import { decode } from '@tersa/tersa/decode'`.
export { decode, decodeStream, joinStream, Decoder, StreamDecoder } from './decoder.js';
export type { DecoderOptions, StreamDecoderOptions, StreamOptions, JoinResult } from './decoder.js';
export { DecodeError, Timestamp, Ext, Float64, addExtension, removeExtension } from './common.js';
export type { DecodeErrorCode, Extension, Zone, DictionaryLike } from './common.js';
