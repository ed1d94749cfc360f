// Encode-only entry point: `import { encode } from 'tersa/encode'`.
export { encode, encodeStream, Encoder, StreamEncoder } from './encoder.js';
export type { EncoderOptions, StreamEncoderOptions, SyncOptions } from './encoder.js';
export { EncodeError, Timestamp, Ext, Float64, addExtension, removeExtension } from './common.js';
export type { Extension, Zone, DictionaryLike } from './common.js';
export { Decimal, CalendarDate, UUID, TimeOfDay, EXT_DECIMAL, EXT_DATE, EXT_UUID, EXT_TIME_OF_DAY } from './well-known.js';
export type { DecimalKind } from './well-known.js';
