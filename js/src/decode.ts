// Decode-only entry point: `import { decode } from 'tersa/decode'`.
export { decode, decodeStream, joinStream, Decoder, StreamDecoder } from './decoder.js';
export type { DecoderOptions, StreamDecoderOptions, StreamOptions, JoinResult } from './decoder.js';
export { DecodeError, Timestamp, Ext, Float64, addExtension, removeExtension } from './common.js';
export type { DecodeErrorCode, Extension, Zone, DictionaryLike } from './common.js';
export { Decimal, CalendarDate, UUID, TimeOfDay, EXT_DECIMAL, EXT_DATE, EXT_UUID, EXT_TIME_OF_DAY } from './well-known.js';
export type { DecimalKind } from './well-known.js';
