// The encoder's state (SPEC 4): one EncoderState per Encoder holds its output
// slab, the string table and shapes with their indexes, the top-level and
// key slots, the last and timestamp registers, and the options the writers
// read. Every writer takes it as its first argument, as the reference
// codec's Encoder holds its State.

import { DEFAULT_MAX_DEPTH, utf8Length } from './common.js';
import type { KeyIdentities } from './key-identity.js';
import { tsParse } from './timestamp-text.js';
import type { TsText } from './timestamp-text.js';
import { commonPrefix, padded } from './encoder-utf8.js';

/**
 * What the encoder knows about one distinct string, persistent across the
 * buffers of an Encoder: whether it is in the current buffer's string table
 * (`gen` is the buffer's generation) and at which lowest index.
 */
export class StrEntry {
  gen = -1;
  idx = -1;
  dict = -1; // index in the encoder's dictionary, or -1
  /** Where its UTF-8 bytes are in the state's byte arena (-1: not kept yet, -2: too long to keep), once written in two buffers: copying them beats re-encoding. */
  boff = -1;
  blen = 0;
  /** Its timestamp fields (null: not timestamp-like; undefined: not read yet), read once per distinct string. */
  ts: TsText | null | undefined = undefined;
}

/** A slot (SPEC 4.3): the registers of one position in the data. */
export class ESlot {
  s: string | null = null; // str register
  c0 = -1; // the str register's first UTF-16 unit (-1: none or empty), so that most strings rule out a prefix by two integer compares
  ik = 0; // int register: 0 none, 1 a safe integer in i, 2 an int64 beyond it as ih (signed) * 2^32 + il
  i = 0;
  ih = 0;
  il = 0;
  dk = false; // dec register
  dm = 0;
  de = 0;
  bin = 0; // binary floats since the last decimal (SPEC 4.3)
  dg = 0; // not format state: the decimals shortestDecimal tries first for the next float here
  sh: EShape | null = null; // memo: the shape of the last map written in this slot
}

export function resetSlot(s: ESlot): void {
  s.s = null;
  s.c0 = -1;
  s.ik = 0;
  s.dk = false;
  s.bin = 0;
}

/** A key sequence, persistent across buffers in one Encoder; `gen === state.gen` means "in this buffer's table at idx". */
export class EShape {
  keys: (string | symbol)[];
  n: number;
  slots: ESlot[];
  gen = -1;
  idx = -1;
  dictIdx = -1;
  // MAPDEF acceleration for all-string keys (null: use the general path)
  kent: (StrEntry | null)[] | null = null; // entries, valid for kepoch
  kepoch = -1;
  kbytes: Uint8Array[] | null = null; // UTF-8 of each key
  kwords: Uint32Array[] | null = null; // ... as padded 32-bit words
  kpfx: Int32Array | null = null; // key i > 0: common prefix bytes with key i-1
  kc0: Int32Array | null = null; // each key's first UTF-16 unit (-1: empty)
  /** Keys 1.. as written when none is in the table (they then depend only on the key before each), once written so. */
  kblock: Uint8Array | null = null;
  kblockw: Uint32Array | null = null;
  plain = false; // all keys strings, none timestamp-like
  evicted = false; // pruned from the registry
  constructor(keys: (string | symbol)[]) {
    this.keys = keys;
    this.n = keys.length;
    this.slots = [];
    for (let i = 0; i < keys.length; i++) this.slots.push(new ESlot());
    let plain = true;
    for (const k of keys) if (typeof k !== 'string' || utf8Length(k) < 0 || (k.length >= 10 && k.length <= 35 && tsParse(k))) plain = false;
    if (plain) {
      this.plain = true;
      const n = keys.length;
      this.kbytes = (keys as string[]).map((k) => padded(textEncoder.encode(k)));
      this.kwords = this.kbytes.map((b) => new Uint32Array(b.buffer));
      this.kpfx = new Int32Array(n);
      this.kc0 = new Int32Array(n);
      for (let i = 0; i < n; i++) this.kc0[i] = firstUnit(keys[i] as string);
      for (let i = 1; i < n; i++) this.kpfx[i] = commonPrefix(keys[i] as string, keys[i - 1] as string) & 0xff;
    }
  }
}

const textEncoder = new TextEncoder();

/** The first UTF-16 unit of s, or -1 when s is empty (a str register's c0). */
export function firstUnit(s: string): number {
  return s.length > 0 ? s.charCodeAt(0) : -1;
}

/**
 * A node of an Encoder's shape registry, a tree of key sequences: the keys
 * from the root lead to it, and `shape` is the shape of exactly those keys.
 * Finding a shape follows one transition per key, keyed by the key itself,
 * whose hash V8 keeps in the string: no string of all the keys is built and
 * hashed per lookup. A node with one child holds it in `key`/`node`; `next`
 * indexes the children once there are more.
 */
export class ShapeNode {
  shape: EShape | null = null;
  key: string | symbol | undefined = undefined;
  node: ShapeNode | null = null;
  next: Map<string | symbol, ShapeNode> | null = null;
}

export class ShapeRegistry {
  root = new ShapeNode();
  count = 0;
}

/** A container whose header is written: `next(w)` writes item `i` (of `n`). See encoder-deep.ts. */
export interface Level {
  i: number;
  readonly n: number;
  next(st: EncoderState): void;
}

export class EncoderState {
  // output: the slab, and this call's bytes at [start, pos)
  buf: Uint8Array = new Uint8Array(0);
  view: DataView = new DataView(this.buf.buffer);
  start = 0;
  pos = 0;
  cap = 0;
  lastLen = 0; // bytes written by the last call (to size a new slab)
  // the string index, persistent across buffers (bounded): every string met
  entries = new Map<string, StrEntry>();
  // The UTF-8 bytes of entries, one after another (4-aligned): one block
  // read in order when a document is written again, where a Uint8Array per
  // string cost a pointer chase to memory of its own for each.
  arena = new Uint8Array(4096);
  arenaW = new Uint32Array(this.arena.buffer);
  arenaPos = 0;
  epoch: number; // changes whenever `entries` is cleared
  registry = new ShapeRegistry();
  keyBuf: string[] = []; // scratch: the keys of an object whose shape is looked up
  // this buffer's tables and registers (SPEC 4)
  gen = 0; // buffer generation: an entry or shape of another generation is not in the tables
  nstr = 0;
  nshape = 0;
  lastStr: string | null = null;
  lastC0 = -1; // lastStr's first UTF-16 unit (-1: none or empty)
  lastTs = 0;
  keySlot = new ESlot();
  depth = 0;
  levels: Level[] | null = null; // the explicit stack of encoder-deep.ts, while it writes
  // options
  maxDepth: number;
  undefinedAsNull: boolean;
  instancesAsMaps: boolean;
  hasDict: boolean;
  protoClean = true; // Object.prototype has no enumerable properties (checked per call)
  keyIds: KeyIdentities | null = null; // of the generic-map keys met in this call
  // the value that failed, and why (see fail)
  failValue: unknown = undefined;
  failReason = '';

  constructor(maxDepth = DEFAULT_MAX_DEPTH, undefinedAsNull = false, instancesAsMaps = false, hasDict = false) {
    this.epoch = ++epochCounter;
    this.maxDepth = maxDepth;
    this.undefinedAsNull = undefinedAsNull;
    this.instancesAsMaps = instancesAsMaps;
    this.hasDict = hasDict;
  }

  /** A fresh generation of the string index (after it is cleared). */
  newEpoch(): void {
    this.epoch = ++epochCounter;
  }

  /** Starts this buffer's tables (SPEC 4.1): the dictionary's strings and shapes, empty registers. */
  newTables(dictStrings: number, dictShapes: number): void {
    this.gen = ++genCounter;
    this.nstr = dictStrings;
    this.nshape = dictShapes;
    this.lastStr = null;
    this.lastC0 = -1;
    this.lastTs = 0;
    this.depth = 0;
    resetSlot(this.keySlot);
  }
}

let genCounter = 0;
let epochCounter = 0;

/** Thrown inside the writers; the Encoder turns it into an EncodeError with a path. */
export class Failure extends Error {}

export function fail(st: EncoderState, value: unknown, reason: string): never {
  st.failValue = value;
  st.failReason = reason;
  throw new Failure(reason);
}
