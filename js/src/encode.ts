// Encode-only entry point: `import { encode } from '@tersa/tersa/encode'`.
export { encode, encodeStream, Encoder, StreamEncoder } from './encoder.js';
export type { EncoderOptions, StreamEncoderOptions, SyncOptions } from './encoder.js';
export { EncodeError, Timestamp, Ext, Float64, addExtension, removeExtension } from './common.js';
export type { Extension, Zone, DictionaryLike } from './common.js';
