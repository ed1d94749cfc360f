// Incremental stream decoding (SPEC 2.3): the header, frames, sync frames and
// joining a stream midway. Items are decoded by decoder.ts (readFrame); this
// module only decides where frames are and what state each starts from.

import { DecodeError, DecodeErrorCode, FLAG_DICT, FLAG_STREAM } from './common.js';
import { Decoder, asBytes, frameLength, readFrame, syncStreamState } from './decoder.js';
import type { DecoderOptions, DictState } from './decoder.js';
import type { DecoderState } from './decoder-state.js';
import { Slot } from './decoder-state.js';

const SYNC = 0xfd;

/** Options of a stream reader beyond those of a Decoder. */
export interface StreamOptions {
  /**
   * The input starts at a frame boundary of a stream, without its header (a
   * consumer that subscribes late): frames are skipped up to the first sync
   * frame, whose version, flags and dictionary id then stand for the header.
   */
  join?: boolean;
}

export interface StreamDecoderOptions extends DecoderOptions, StreamOptions {}

/** What a joining decoder read: where it started and the values from there on. */
export interface JoinResult {
  /** Offset in the input of the first sync frame's length varint; null when no sync frame came. */
  joinedAt: number | null;
  values: any[];
}

function fail(code: DecodeErrorCode, at: number, msg: string): never {
  throw new DecodeError(code, at, msg);
}

/**
 * Incremental stream decoder: `feed()` bytes as they arrive and iterate over
 * the values whose frames are complete; `end()` checks that the input did not
 * stop inside the header or a frame. Offsets in errors count from the first
 * byte fed. A Decoder may be given instead of options (its tables' storage
 * and shape memo are then shared), with the stream options second.
 */
export class StreamDecoder implements Iterable<any> {
  private dec: Decoder;
  private readonly join: boolean;
  private buf: Uint8Array = new Uint8Array(0);
  private len = 0; // bytes buffered
  private off = 0; // start of unconsumed bytes within buf
  private base = 0; // stream offset of buf[0]
  private started: boolean; // past the header (a joining decoder has none)
  private failed: DecodeError | null = null;
  // The stream's VF byte and dictionary id: from the header, or when joining
  // from the first sync frame (vf -1 until then). Sync frames must repeat them.
  private vf = -1;
  private id: Uint8Array | null = null;
  private dict: DictState | null = null;
  // the stream's tables and registers, and its top-level slot
  private rd: DecoderState;
  private root = new Slot();
  // false before the first sync frame: nothing can be decoded yet
  private synced = false;
  // A joining decoder drops a skipped frame's bytes as they arrive instead of
  // buffering them: `skip` more are to come, for the frame whose length is at `skipAt`.
  private skip = 0;
  private skipAt = 0;
  /** With `join`: the offset of the first sync frame's length varint (where decoding started), or null until one came. */
  joinedAt: number | null = null;

  constructor(options: StreamDecoderOptions | Decoder = {}, stream?: StreamOptions) {
    if (options instanceof Decoder) {
      this.dec = options;
      this.join = !!stream?.join;
    } else {
      this.dec = new Decoder(options);
      this.join = !!(stream?.join ?? options.join);
    }
    this.started = this.join;
    this.rd = this.dec._newState();
  }

  /** Appends bytes to the input. */
  feed(chunk: Uint8Array | ArrayBuffer): this {
    let c = asBytes(chunk);
    if (this.off > 0 && this.off === this.len) {
      this.base += this.off;
      this.off = this.len = 0;
    }
    if (this.skip > 0) {
      // nothing is buffered while skipping: buf[0] is the byte after the dropped ones
      const k = Math.min(this.skip, c.length);
      this.skip -= k;
      this.base += k;
      c = c.subarray(k);
    }
    if (this.len + c.length > this.buf.length) {
      const keep = this.len - this.off;
      const nb = new Uint8Array(Math.max(keep + c.length, this.buf.length * 2, 256));
      nb.set(this.buf.subarray(this.off, this.len), 0);
      this.base += this.off;
      this.buf = nb;
      this.len = keep;
      this.off = 0;
    }
    this.buf.set(c, this.len);
    this.len += c.length;
    return this;
  }

  /** Decodes and returns the next complete value, or `done` if none is complete yet. */
  next(): IteratorResult<any> {
    if (this.failed) throw this.failed;
    return this.step(false);
  }

  [Symbol.iterator](): Iterator<any> {
    return { next: () => this.next() };
  }

  /** Declares the input complete: throws if it ended inside the header or a frame. */
  end(): void {
    if (this.failed) throw this.failed;
    if (this.skip > 0) {
      this.failed = new DecodeError('length_exceeds_input', this.skipAt, 'frame longer than the input');
      throw this.failed;
    }
    if (this.off < this.len || !this.started) {
      const r = this.step(true);
      if (!r.done) throw new Error('end() called with complete values not yet read');
    }
  }

  private rethrow(e: unknown): never {
    if (e instanceof DecodeError) {
      const err = new DecodeError(e.code, e.offset + this.base, e.detail);
      this.failed = err;
      throw err;
    }
    throw e;
  }

  private step(final: boolean): IteratorResult<any> {
    const d = this.dec;
    const rd = this.rd;
    d._enter(rd);
    try {
      const b = this.buf;
      const input = b.subarray(0, this.len);
      if (!this.started) {
        if (!this.header(final)) return { done: true, value: undefined };
      }
      for (;;) {
        if (this.off >= this.len) return { done: true, value: undefined };
        const at = this.off;
        if (!final) {
          const f = b[at];
          const L = f === 0 ? 9 : 31 - Math.clz32(f & -f) + 1;
          if (at + L > this.len) return { done: true, value: undefined };
        }
        const n = frameLength(rd, input, at, this.len);
        let p = rd.pos;
        if (n > this.len - p) {
          if (!final) {
            if (this.join && !this.synced && p < this.len && b[p] !== SYNC) {
              // skipped whole, so its bytes need not be kept until they are all here
              this.skip = n - (this.len - p);
              this.skipAt = this.base + at;
              this.off = this.len;
            }
            return { done: true, value: undefined };
          }
          fail('length_exceeds_input', at, 'frame longer than the input');
        }
        if (n === 0) fail('invalid_value', at, 'empty stream frame');
        const fend = p + n;
        if (b[p] === SYNC) {
          p = this.syncFields(p, fend, at);
          syncStreamState(rd, this.root, this.dict, !this.synced);
          this.synced = true;
        } else if (!this.synced) {
          if (!this.join) fail('out_of_sequence', p, "the stream's first frame is not a sync frame");
          this.off = fend;
          continue;
        }
        const v = readFrame(rd, this.root, input, p, fend);
        this.off = fend;
        return { done: false, value: v };
      }
    } catch (e) {
      return this.rethrow(e);
    } finally {
      d._leave(rd);
    }
  }

  /** The stream header, decided as soon as the bytes present allow; false while incomplete. */
  private header(final: boolean): boolean {
    const n = this.len;
    const b = this.buf;
    if ((n >= 1 && b[0] !== 0xc1) || (n >= 2 && b[1] !== 0x70)) fail('bad_magic', 0, 'not a Tersa buffer');
    if (n >= 3) this.checkVF(b[2], 2);
    const need = n >= 3 && b[2] & FLAG_DICT ? 11 : 3;
    if (n < need) {
      if (!final) return false;
      fail('truncated', n < 3 ? 0 : 3, 'input ends inside the header');
    }
    this.useVF(b[2], 3);
    this.started = true;
    this.off = need;
    return true;
  }

  /** A header's VF byte (or a joined stream's first sync frame's) at `at`. */
  private checkVF(vf: number, at: number): void {
    if (vf >> 4 !== 1) fail('unsupported_version', at, `version ${vf >> 4}`);
    if (vf & 0x0c) fail('bad_flags', at, 'reserved header flag set');
    if (!(vf & FLAG_STREAM)) fail('bad_flags', at, 'not a stream buffer');
  }

  /** Takes the stream's VF byte and the dictionary id at `at` (present when DICT is set). */
  private useVF(vf: number, at: number): void {
    this.vf = vf;
    if (!(vf & FLAG_DICT)) return;
    const b = this.buf;
    let id = 0n;
    for (let i = at + 7; i >= at; i--) id = (id << 8n) | BigInt(b[i]);
    const dict = this.dec._dicts.get(id);
    if (dict === undefined) fail('unknown_dictionary', at, `dictionary 0x${id.toString(16).padStart(16, '0')} was not supplied`);
    this.dict = dict;
    this.id = b.slice(at, at + 8);
  }

  /** The fields of a sync frame whose SYNC byte is at `p`; returns where its item starts. */
  private syncFields(p: number, fend: number, at: number): number {
    const b = this.buf;
    const vat = p + 1;
    if (vat >= fend) fail('truncated', vat, 'frame ends inside the sync fields');
    const vf = b[vat];
    const q = vat + 1;
    const dictAt = vf & FLAG_DICT;
    if (this.vf < 0) {
      // joining: this frame stands for the header
      this.checkVF(vf, vat);
      if (dictAt && q + 8 > fend) fail('truncated', q, 'frame ends inside the dictionary id');
      this.useVF(vf, q);
      this.joinedAt = this.base + at;
      return dictAt ? q + 8 : q;
    }
    if (vf !== this.vf) fail('bad_sync', vat, "sync frame flags differ from the stream's");
    const id = this.id;
    if (id === null) return q;
    if (q + 8 > fend) fail('truncated', q, 'frame ends inside the dictionary id');
    for (let i = 0; i < 8; i++) if (b[q + i] !== id[i]) fail('bad_sync', q, 'sync frame names another dictionary');
    return q + 8;
  }
}
