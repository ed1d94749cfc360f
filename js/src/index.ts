// Tersa: compact, fast, schemaless binary serialization (spec/SPEC.md).
export { encode, encodeStream, Encoder, StreamEncoder } from './encoder.js';
export type { EncoderOptions, StreamEncoderOptions, SyncOptions } from './encoder.js';
export { decode, decodeStream, joinStream, Decoder, StreamDecoder } from './decoder.js';
export type { DecoderOptions, StreamDecoderOptions, StreamOptions, JoinResult } from './decoder.js';
export { Dictionary } from './dictionary.js';
export type { FromSamplesOptions, Key } from './dictionary.js';
export { diag } from './diag.js';
export { DecodeError, EncodeError, Timestamp, Ext, Float64, addExtension, removeExtension } from './common.js';
export type { DecodeErrorCode, Extension, Zone, DictionaryLike } from './common.js';
export { DictionaryRegistry, UnknownDictionaryError, dictionaryId, DEFAULT_PREFIX as DICTIONARY_PREFIX, type DictionaryStore } from './dictionary-registry.js';
export { Decimal, CalendarDate, UUID, TimeOfDay, EXT_DECIMAL, EXT_DATE, EXT_UUID, EXT_TIME_OF_DAY } from './well-known.js';
export type { DecimalKind } from './well-known.js';
