// Type-checked against the installed tarball (make test-npm-pack): the
// "types" of each export resolve, for ESM here and CommonJS in the .cts.
import { encode, decode, DecodeError } from 'tersa';
import { decode as decodeOnly } from 'tersa/decode';
import { parser, send, respond, MEDIA_TYPE, TersaBodyError, type ParserOptions } from 'tersa/express';

const options: ParserOptions = { limit: '1mb', errors: 'next', decoder: { maps: 'map' } };
const bytes: Uint8Array = encode({ a: 1 });
const value: unknown = decode(bytes) ?? decodeOnly(bytes);
const kinds: [unknown, unknown, unknown, string, unknown, unknown, unknown] = [parser(options), send, respond, MEDIA_TYPE, TersaBodyError, DecodeError, value];
export default kinds;
