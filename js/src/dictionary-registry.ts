// Dictionaries distributed by id through a shared store, the way a schema
// registry works: a producer publishes its dictionary once, and a consumer
// that meets a buffer naming an id it does not hold fetches it by that id,
// then decodes. The store is injected (anything with get/set on bytes), so
// the package depends on no client.

import { DecodeError } from './common.js';
import { decode, decodeStream, joinStream } from './decoder.js';
import type { DecoderOptions, JoinResult, StreamDecoderOptions } from './decoder.js';
import { Dictionary } from './dictionary.js';

/**
 * What the registry needs of a store: the bytes under a key (null or
 * undefined when absent) and set. Either may return a promise. A Redis
 * client must return bytes, not text: with node-redis,
 * `client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer })`; with
 * ioredis, a wrapper whose get is `getBuffer`.
 */
export interface DictionaryStore {
  get(key: string): unknown;
  set(key: string, value: Uint8Array): unknown;
}

export const DEFAULT_PREFIX = 'tersa:dictionary:';

const SYNC = 0xfd;
const FLAG_DICT = 0x01;

function hex(id: bigint): string {
  return id.toString(16).padStart(16, '0');
}

/**
 * A buffer names a dictionary that neither the registry's cache nor its store
 * holds, or the store's entry is not that dictionary. A DecodeError with code
 * `unknown_dictionary` at offset 3, like the decoder's own, plus the id looked
 * for and the store key.
 */
export class UnknownDictionaryError extends DecodeError {
  readonly dictionaryId: bigint;
  readonly key: string;
  constructor(dictionaryId: bigint, key: string, detail: string) {
    super('unknown_dictionary', 3, detail);
    this.name = 'UnknownDictionaryError';
    this.dictionaryId = dictionaryId;
    this.key = key;
  }
}

/**
 * Publishes dictionaries under their ids and fetches them on first use. A
 * dictionary's id is the hash of its serialization (SPEC 8), so an entry never
 * changes meaning: fetched dictionaries are cached for the registry's life, and
 * one whose id differs from the key it was stored under is refused. Misses are
 * not cached: the producer may publish after the consumer looked.
 */
export class DictionaryRegistry {
  readonly store: DictionaryStore;
  readonly prefix: string;
  private readonly cache = new Map<bigint, Dictionary>();
  private readonly inflight = new Map<bigint, Promise<Dictionary>>();

  constructor(store: DictionaryStore, options: { prefix?: string } = {}) {
    if (typeof store?.get !== 'function' || typeof store?.set !== 'function') {
      throw new TypeError('store must have get(key) and set(key, value)');
    }
    this.store = store;
    this.prefix = options.prefix ?? DEFAULT_PREFIX;
  }

  /** The store key of an id: the prefix and 16 lowercase hex digits. */
  key(id: bigint): string {
    return this.prefix + hex(id);
  }

  /** Stores the dictionary under its id (and caches it); resolves to the id. */
  async publish(dict: Dictionary): Promise<bigint> {
    await this.store.set(this.key(dict.id), dict.serialize());
    this.cache.set(dict.id, dict);
    return dict.id;
  }

  cached(id: bigint): boolean {
    return this.cache.has(id);
  }

  /** The dictionary with this id, from the cache or else the store (one request per id at a time). */
  fetch(id: bigint): Promise<Dictionary> {
    const hit = this.cache.get(id);
    if (hit) return Promise.resolve(hit);
    let p = this.inflight.get(id);
    if (!p) {
      p = this.load(id).finally(() => this.inflight.delete(id));
      this.inflight.set(id, p);
    }
    return p;
  }

  private async load(id: bigint): Promise<Dictionary> {
    const key = this.key(id);
    const data = await this.store.get(key);
    if (data === null || data === undefined) {
      throw new UnknownDictionaryError(id, key, `dictionary 0x${hex(id)} is not in the store (key ${key})`);
    }
    if (!(data instanceof Uint8Array)) {
      throw new UnknownDictionaryError(id, key, `the store returned ${typeof data === 'string' ? 'text' : typeof data} for ${key}: give the registry a client that returns bytes`);
    }
    let dict: Dictionary;
    try {
      dict = Dictionary.parse(data);
    } catch (e) {
      throw new UnknownDictionaryError(id, key, `the store's entry ${key} is not a serialized dictionary (${(e as Error).message})`);
    }
    if (dict.id !== id) {
      throw new UnknownDictionaryError(id, key, `the store's entry ${key} holds dictionary 0x${hex(dict.id)}, not 0x${hex(id)}`);
    }
    const again = this.cache.get(id);
    if (again) return again;
    this.cache.set(id, dict);
    return dict;
  }

  /** The dictionary a buffer (join: frames from a frame boundary) names, fetched if needed; null when it names none. */
  async dictionaryFor(input: Uint8Array, join = false): Promise<Dictionary | null> {
    const id = dictionaryId(input, join);
    return id === null ? null : this.fetch(id);
  }

  /** `decode` with the dictionary the buffer names. */
  async decode(input: Uint8Array, options: DecoderOptions = {}): Promise<any> {
    const dict = await this.dictionaryFor(input);
    return decode(input, dict ? { ...options, dictionaries: [dict] } : options);
  }

  /** `decodeStream` with the dictionary the stream names (join: in its first sync frame). */
  async decodeStream(input: Uint8Array, options: StreamDecoderOptions = {}): Promise<any[]> {
    const dict = await this.dictionaryFor(input, options.join === true);
    return decodeStream(input, dict ? { ...options, dictionaries: [dict] } : options);
  }

  /** `joinStream` with the dictionary of the first sync frame. */
  async joinStream(input: Uint8Array, options: DecoderOptions = {}): Promise<JoinResult> {
    const dict = await this.dictionaryFor(input, true);
    return joinStream(input, dict ? { ...options, dictionaries: [dict] } : options);
  }
}

/**
 * The dictionary id a buffer's header names (SPEC 2.1), or with `join` the one
 * in the first sync frame of frames taken from a frame boundary (SPEC 2.3);
 * null when it names none or the bytes are too malformed to say, in which case
 * decoding reports what is wrong with them.
 */
export function dictionaryId(input: Uint8Array, join = false): bigint | null {
  if (!join) return input.length >= 2 && input[0] === 0xc1 && input[1] === 0x70 ? headerId(input, 2) : null;
  let pos = 0;
  while (pos < input.length) {
    const v = varint(input, pos);
    if (v === null || v[0] === 0n) return null;
    pos += v[1];
    if (BigInt(pos) + v[0] > BigInt(input.length)) return null;
    if (input[pos] === SYNC) return headerId(input, pos + 1);
    pos += Number(v[0]);
  }
  return null;
}

function headerId(b: Uint8Array, vfAt: number): bigint | null {
  if (b.length < vfAt + 9 || (b[vfAt] & FLAG_DICT) === 0) return null;
  return new DataView(b.buffer, b.byteOffset + vfAt + 1, 8).getBigUint64(0, true);
}

/** A prefix varint (SPEC 3.1) at pos: [value, length], or null if cut short. */
function varint(b: Uint8Array, pos: number): [bigint, number] | null {
  const first = b[pos];
  const len = first === 0 ? 9 : 32 - Math.clz32(first & -first);
  if (pos + len > b.length) return null;
  if (len === 9) return [new DataView(b.buffer, b.byteOffset + pos + 1, 8).getBigUint64(0, true), 9];
  let w = 0n;
  for (let i = len - 1; i >= 0; i--) w = (w << 8n) | BigInt(b[pos + i]);
  return [w >> BigInt(len), len];
}
