// Express integration: `import { parser, send, respond } from 'tersa/express'`.
// Express is not a dependency: requests and responses are typed by what this
// module uses of them (Node's IncomingMessage/ServerResponse plus Express's
// req.accepts and res.json), so the package installs and type-checks without it.

import { DecodeError } from './common.js';
import { decode, decodeStream } from './decoder.js';
import type { DecoderOptions } from './decoder.js';
import { encode } from './encoder.js';
import type { EncoderOptions } from './encoder.js';

/** The media type of a Tersa document. */
export const MEDIA_TYPE = 'application/vnd.tersa';

/** What the parser uses of a request: Node's IncomingMessage. */
export interface TersaRequest {
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
  /** The values of a stream body (SPEC 2.3), set by the parser. */
  tersaStream?: unknown[];
  /** Set by body parsers (body-parser's convention) once the body is read. */
  _body?: boolean;
  on(event: string, listener: (...args: any[]) => void): unknown;
  removeListener(event: string, listener: (...args: any[]) => void): unknown;
  resume(): unknown;
  /** Express's: when present, error bodies are negotiated as `respond` does. */
  accepts?(types: string[]): string | false;
}

/** What `send` uses of a response: Node's ServerResponse. */
export interface TersaResponse {
  statusCode: number;
  headersSent?: boolean;
  setHeader(name: string, value: string | number | readonly string[]): unknown;
  getHeader(name: string): unknown;
  end(chunk?: Uint8Array): unknown;
}

/** What `respond` uses beyond that: Express's req.accepts and res.json. */
export interface NegotiatingRequest {
  accepts(types: string[]): string | false;
}
export interface JsonResponse extends TersaResponse {
  json(body: unknown): unknown;
}

export type Next = (err?: unknown) => void;

export interface ParserOptions {
  /**
   * Largest body accepted, in bytes or as a string with a unit (`'512kb'`,
   * `'4mb'`; units are powers of 1024). Default `'1mb'`. A larger body is
   * refused with 413 before it is buffered.
   */
  limit?: number | string;
  /** Content types parsed (parameters are ignored). Default `MEDIA_TYPE`. */
  type?: string | readonly string[];
  /** Options for `decode` (dictionaries, maps, dates, ...). */
  decoder?: DecoderOptions;
  /**
   * Replaces `decode(bytes, decoder)`, e.g. `(b) => registry.decode(b)` to
   * fetch dictionaries by id. May return a promise; a DecodeError it throws
   * is a 400 like the decoder's.
   */
  decode?: (bytes: Uint8Array) => unknown;
  /** The same for stream bodies, e.g. `(b) => registry.decodeStream(b)`. */
  decodeStream?: (bytes: Uint8Array) => unknown[] | PromiseLike<unknown[]>;
  /**
   * `'respond'` (default): a body that cannot be accepted is answered here
   * (400, 413 or 415) with `{ error, message, ... }`, in JSON unless the
   * request's Accept prefers Tersa. `'next'`: a `TersaBodyError` is
   * passed to `next` for the application's error handler.
   */
  errors?: 'respond' | 'next';
}

export type BodyErrorType = 'entity.parse.failed' | 'entity.too.large' | 'encoding.unsupported';

/**
 * A request body the parser refused. `status` and `expose` follow the
 * http-errors convention that Express's error handler reads; `type` is
 * body-parser's name for the same failure; `body` is what the parser sends
 * in `'respond'` mode; `cause` is the DecodeError of a malformed body.
 */
class TersaBodyError extends Error {
  readonly status: number;
  readonly statusCode: number;
  readonly expose = true;
  readonly type: BodyErrorType;
  readonly body: { error: string; message: string; [field: string]: string | number };
  constructor(status: number, type: BodyErrorType, body: { error: string; message: string; [field: string]: string | number }, cause?: DecodeError) {
    super(body.message, cause ? { cause } : undefined);
    this.name = 'TersaBodyError';
    this.status = this.statusCode = status;
    this.type = type;
    this.body = body;
  }
}

// One class however the package is loaded (import and require are two
// copies of this module), as common.ts does for DecodeError: an error
// handler's `instanceof TersaBodyError` holds for errors from either copy.
const EXPRESS_KEY = Symbol.for('tersa/express runtime v1');

function sharedBodyError(): typeof TersaBodyError {
  const g = globalThis as unknown as Record<symbol, { TersaBodyError: typeof TersaBodyError } | undefined>;
  const found = g[EXPRESS_KEY];
  if (found) return found.TersaBodyError;
  try {
    Object.defineProperty(g, EXPRESS_KEY, { value: Object.freeze({ TersaBodyError }), enumerable: false, writable: false, configurable: false });
  } catch {
    // A non-extensible global object: this copy keeps its own.
  }
  return TersaBodyError;
}

const SharedBodyError = sharedBodyError();
type SharedBodyError = TersaBodyError;
export { SharedBodyError as TersaBodyError };

const STREAM_FLAG = 0x02; // SPEC 2.1: in the header's third byte

const UNITS: Record<string, number> = { b: 1, kb: 1 << 10, mb: 1 << 20, gb: 1 << 30 };

function parseLimit(limit: number | string): number {
  if (typeof limit === 'number' && Number.isFinite(limit) && limit >= 0) return Math.floor(limit);
  const m = typeof limit === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(limit) : null;
  if (!m) throw new TypeError(`limit must be a byte count or a size such as '512kb': ${String(limit)}`);
  return Math.floor(Number(m[1]) * UNITS[(m[2] ?? 'b').toLowerCase()]);
}

function header(req: TersaRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

function mediaType(contentType: string): string {
  const semi = contentType.indexOf(';');
  return (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

// A request has a body when it says how long it is or that it is chunked
// (RFC 9112 6.3); without either, a GET or DELETE has none to read.
function hasBody(req: TersaRequest): boolean {
  return header(req, 'transfer-encoding') !== undefined || header(req, 'content-length') !== undefined;
}

function concat(chunks: Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(length);
  let at = 0;
  for (const c of chunks) { out.set(c, at); at += c.length; }
  return out;
}

function prefersTersa(req: { accepts?(types: string[]): string | false }): boolean {
  return typeof req.accepts === 'function' && req.accepts(['application/json', MEDIA_TYPE]) === MEDIA_TYPE;
}

// The error names and fields are those of Ruby's Tersa::Rack and Python's
// HTTP example, so a client reads a refusal the same way from each.
function sendError(req: TersaRequest, res: TersaResponse, err: SharedBodyError): void {
  res.statusCode = err.status;
  if (typeof req.accepts === 'function') addVary(res, 'Accept');
  if (prefersTersa(req)) {
    send(res, err.body);
    return;
  }
  const bytes = new TextEncoder().encode(JSON.stringify(err.body));
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', String(bytes.length));
  res.end(bytes);
}

/**
 * Middleware that decodes request bodies of the Tersa media type: a single
 * value into `req.body`, a stream (SPEC 2.3) into `req.tersaStream` as the
 * array of its values. An empty body sets neither. Other content types,
 * bodiless requests and requests another parser has read pass through
 * untouched. A malformed body is a 400 naming the DecodeError's code and
 * offset, a body over `limit` a 413, a compressed body (Content-Encoding) a 415.
 */
export function parser(options: ParserOptions = {}) {
  const limit = parseLimit(options.limit ?? '1mb');
  const types = new Set((typeof options.type === 'string' ? [options.type] : options.type ?? [MEDIA_TYPE]).map(mediaType));
  const decodeValue = options.decode ?? ((bytes: Uint8Array) => decode(bytes, options.decoder));
  const decodeValues = options.decodeStream ?? ((bytes: Uint8Array) => decodeStream(bytes, options.decoder));
  const passErrors = options.errors === 'next';

  return function tersaParser(req: TersaRequest, res: TersaResponse, next: Next): void {
    const contentType = header(req, 'content-type');
    if (req._body || contentType === undefined || !types.has(mediaType(contentType)) || !hasBody(req)) {
      next();
      return;
    }
    req._body = true;

    const chunks: Uint8Array[] = [];
    let received = 0;
    let settled = false;
    const tooLarge = () =>
      new SharedBodyError(413, 'entity.too.large', { error: 'body_too_large', message: `request body over ${limit} bytes`, limit });

    const encoding = (header(req, 'content-encoding') ?? 'identity').trim().toLowerCase();
    if (encoding !== 'identity') {
      refuse(new SharedBodyError(415, 'encoding.unsupported', { error: 'unsupported_encoding', message: `content encoding ${encoding} is not supported` }));
      return;
    }
    if (Number(header(req, 'content-length')) > limit) {
      refuse(tooLarge());
      return;
    }

    function refuse(err: SharedBodyError): void {
      if (settled) return;
      settled = true;
      cleanup();
      // The rest of the body is never read: closing the connection after the
      // answer bounds what the client can still send; until then it is discarded.
      if (!res.headersSent) res.setHeader('Connection', 'close');
      req.resume();
      if (passErrors) next(err);
      else sendError(req, res, err);
    }
    function onData(chunk: Uint8Array): void {
      received += chunk.length;
      if (received > limit) refuse(tooLarge());
      else chunks.push(chunk);
    }
    function onError(err: unknown): void {
      if (settled) return;
      settled = true;
      cleanup();
      next(err);
    }
    function onEnd(): void {
      if (settled) return;
      settled = true;
      cleanup();
      Promise.resolve()
        .then(async () => {
          // Servers differ on whether an empty body has a length, so an empty
          // body is no body, as in Ruby's Tersa::Rack.
          if (received === 0) return;
          const bytes = concat(chunks, received);
          if (bytes.length > 2 && (bytes[2] & STREAM_FLAG) !== 0) req.tersaStream = await decodeValues(bytes);
          else req.body = await decodeValue(bytes);
        })
        .then(
          () => { next(); },
          (err) => {
            if (!(err instanceof DecodeError)) { next(err); return; }
            const e = new SharedBodyError(400, 'entity.parse.failed', { error: 'invalid_body', message: err.message, code: err.code, offset: err.offset }, err);
            if (passErrors) next(e);
            else sendError(req, res, e);
          },
        );
    }
    function cleanup(): void {
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('error', onError);
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  };
}

/**
 * Answers with `value` encoded as Tersa (Content-Type `application/vnd.tersa`).
 * The status is whatever was set before (`res.status(201)`), 200 by default.
 * An EncodeError is thrown before anything is sent.
 */
export function send(res: TersaResponse, value: unknown, options?: EncoderOptions): void {
  const bytes = encode(value, options);
  res.setHeader('Content-Type', MEDIA_TYPE);
  res.setHeader('Content-Length', String(bytes.length));
  res.end(bytes);
}

function addVary(res: TersaResponse, field: string): void {
  const current = res.getHeader('Vary');
  const fields = (Array.isArray(current) ? current.join(',') : current === undefined ? '' : String(current))
    .split(',').map((f) => f.trim()).filter((f) => f !== '');
  if (fields.includes('*') || fields.some((f) => f.toLowerCase() === field.toLowerCase())) return;
  res.setHeader('Vary', [...fields, field].join(', '));
}

/**
 * Content negotiation: Tersa when the request's Accept header prefers
 * `application/vnd.tersa` to `application/json` (by quality, then
 * specificity, as `req.accepts` ranks them), otherwise `res.json(value)`.
 * No Accept header, or `*\/*`, is JSON. Adds `Vary: Accept` so caches keep
 * the two apart.
 */
export function respond(req: NegotiatingRequest, res: JsonResponse, value: unknown, options?: EncoderOptions): void {
  addVary(res, 'Accept');
  if (prefersTersa(req)) send(res, value, options);
  else res.json(value);
}
