// Stream encoder (SPEC 2.3): one frame per value, and where the writer's sync
// options ask, a sync frame that restarts from the start-of-buffer state, so
// that a consumer joining the stream there needs nothing written before it.

import { FLAG_STREAM, Tag } from './common.js';
import { Encoder, encodeFrame, newStreamTables } from './encoder.js';
import type { EncoderOptions, StreamTables } from './encoder.js';
import { checkOptions, STREAM_ENCODER_OPTIONS } from './options.js';

/** Where a stream encoder writes sync frames besides the first frame (SPEC 2.3). */
export interface SyncOptions {
  /** Frame `k` (counted from 0) is a sync frame when `syncFrames` divides `k`. 0 or absent: off. */
  syncFrames?: number;
  /**
   * A frame is a sync frame once at least `syncBytes` bytes of frames (length
   * varints included) were written since the start of the last sync frame.
   * 0 or absent: off.
   */
  syncBytes?: number;
}

/** Where a stream encoder also sends each piece it returns: a function, or anything with `write(bytes)` (a Node `Writable`, a `WritableStreamDefaultWriter`). */
export type StreamOutput = ((bytes: Uint8Array) => unknown) | { write(bytes: Uint8Array): unknown };

export interface StreamEncoderOptions extends EncoderOptions, SyncOptions {
  /** Also hand every piece `write` and `header` return to this output. */
  output?: StreamOutput;
}

function syncOption(name: string, v: number | undefined): number {
  if (v === undefined) return 0;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw new RangeError(`${name} must be a non-negative integer, got ${String(v)}`);
  }
  return v;
}

/**
 * Every value becomes one frame, and all frames share tables, so later values
 * refer to the strings and shapes of earlier ones, up to the next sync frame.
 * `write(value)` returns the bytes to append (the header first, once), and
 * hands them to `output` if one was given. After a failed write (or output)
 * the encoder's tables no longer match what a decoder saw, so it refuses
 * further writes.
 */
export class StreamEncoder {
  private enc: Encoder;
  private tables: StreamTables = newStreamTables();
  private headerSent = false;
  private broken: Error | null = null;
  private readonly syncFrames: number;
  private readonly syncBytes: number;
  private frames = 0; // frames written
  private sinceSync = 0; // bytes of frames since the start of the last sync frame
  private wantSync = true; // the first frame is a sync frame
  private readonly mark: Uint8Array; // SYNC, the header's VF byte, the dictionary id
  private readonly output: ((bytes: Uint8Array) => unknown) | null;

  constructor(options: StreamEncoderOptions = {}) {
    checkOptions(options, STREAM_ENCODER_OPTIONS, 'encode');
    this.syncFrames = syncOption('syncFrames', options.syncFrames);
    this.syncBytes = syncOption('syncBytes', options.syncBytes);
    this.output = outputOption(options.output);
    this.enc = new Encoder(options.output === undefined ? options : { ...options, output: undefined });
    const h = this.enc._header;
    this.mark = new Uint8Array(h.length - 1);
    this.mark[0] = Tag.SYNC;
    this.mark.set(h.subarray(2), 1);
    this.mark[1] |= FLAG_STREAM;
  }

  /**
   * The stream header alone, before any frame (also handed to `output`); the
   * writes that follow do not repeat it. Once the header was given out (here
   * or by the first `write`) this throws: every piece belongs to the stream once.
   */
  header(): Uint8Array {
    if (this.headerSent) throw new Error("StreamEncoder: the stream's header was already written");
    if (this.broken) throw new Error('StreamEncoder: a previous write failed; the stream cannot continue');
    this.headerSent = true;
    const h = this.enc._header.slice();
    h[2] |= FLAG_STREAM;
    this.emit(h);
    return h;
  }

  private emit(bytes: Uint8Array): void {
    if (this.output === null) return;
    try {
      this.output(bytes);
    } catch (err) {
      this.broken = err as Error;
      throw err;
    }
  }

  /** Makes the next frame a sync frame (a consumer can join the stream there). */
  sync(): this {
    this.wantSync = true;
    return this;
  }

  /** Encodes one value as a frame. */
  write(value: unknown): Uint8Array {
    if (this.broken) throw new Error('StreamEncoder: a previous write failed; the stream cannot continue');
    const sync =
      this.wantSync ||
      (this.syncFrames > 0 && this.frames % this.syncFrames === 0) ||
      (this.syncBytes > 0 && this.sinceSync >= this.syncBytes);
    let head: Uint8Array | null = null;
    if (!this.headerSent) {
      head = this.enc._header.slice();
      head[2] |= FLAG_STREAM;
      this.headerSent = true;
    }
    let out: Uint8Array;
    try {
      out = encodeFrame(this.enc, this.tables, sync ? this.mark : null, head, value);
    } catch (err) {
      this.broken = err as Error;
      throw err;
    }
    const n = out.length - (head === null ? 0 : head.length);
    this.sinceSync = (sync ? 0 : this.sinceSync) + n;
    this.frames++;
    this.wantSync = false;
    this.emit(out);
    return out;
  }
}

function outputOption(o: StreamOutput | undefined): ((bytes: Uint8Array) => unknown) | null {
  if (o === undefined || o === null) return null;
  if (typeof o === 'function') return o;
  if (typeof o === 'object' && typeof o.write === 'function') return (bytes) => o.write(bytes);
  throw new TypeError('output must be a function or an object with a write(bytes) method');
}
