// Containers nested deeper than the decoder recurses (RECURSION_DEPTH in
// decoder-state.ts) are decoded here, level by level from an explicit stack, so
// the nesting an input may have is bounded by maxDepth and memory, never by
// the JavaScript stack. Items are read by the decoder's own read(): a
// container among them parses its header there (with every check, in order)
// and comes back as a new level, whose value is delivered when it completes.

import { read } from './decoder-values.js';
import { shapedValue } from './decoder-shapes.js';
import type { ShapeInfo } from './decoder-shapes.js';
import { exactKeyTag, MapBuilder } from './map-keys.js';
import type { DecoderState, Level, Slot } from './decoder-state.js';

/** Returned by read() for a container that was stacked as a level instead of decoded. */
export const PENDING: unknown = Object.freeze({ pending: true });

class ArrayLevel implements Level {
  readonly a: unknown[] = [];
  constructor(
    public left: number,
    readonly slot: Slot,
  ) {}
  next(rd: DecoderState): unknown {
    return read(rd, this.slot);
  }
  take(_rd: DecoderState, v: unknown): void {
    this.a.push(v);
  }
  value(): unknown {
    return this.a;
  }
}

class ShapedLevel implements Level {
  readonly values: unknown[] = [];
  left: number;
  constructor(
    readonly info: ShapeInfo,
    readonly slots: Slot[],
  ) {
    this.left = info.n;
  }
  next(rd: DecoderState): unknown {
    return read(rd, this.slots[this.values.length]);
  }
  take(_rd: DecoderState, v: unknown): void {
    this.values.push(v);
  }
  value(rd: DecoderState): unknown {
    return shapedValue(rd, this.info, this.values);
  }
}

/** Keys and values alternately; a key is read with exact floats, as in genericMap. */
class GenericMapLevel implements Level {
  readonly b: MapBuilder;
  left: number;
  keyTag = -1;
  exactBefore = false; // the exactFloats setting to restore once a key is read
  constructor(
    n: number,
    at: number,
    readonly slot: Slot,
  ) {
    this.b = new MapBuilder(at);
    this.left = 2 * n;
  }
  next(rd: DecoderState): unknown {
    const b = this.b;
    if (b.ks.length === b.vs.length) {
      const t = (this.keyTag = rd.pos < rd.end ? rd.src[rd.pos] : -1);
      if (exactKeyTag(t)) {
        this.exactBefore = rd.exactFloats;
        rd.exactFloats = true;
      }
    }
    return read(rd, this.slot);
  }
  take(rd: DecoderState, v: unknown): void {
    const b = this.b;
    if (b.ks.length === b.vs.length) {
      if (exactKeyTag(this.keyTag)) rd.exactFloats = this.exactBefore;
      b.key(rd, this.keyTag, v);
    } else b.vs.push(v);
  }
  value(rd: DecoderState): unknown {
    return this.b.result(rd);
  }
}

/**
 * Decodes the items of a container whose header is read, at nesting
 * `depth`. Inside a level's items it only stacks the level (and read()
 * returns PENDING); otherwise it decodes every level until this one is
 * complete and returns its value.
 */
function nest(rd: DecoderState, level: Level, depth: number): unknown {
  rd.depth = depth + 1;
  if (rd.levels !== null) {
    rd.levels.push(level);
    return PENDING;
  }
  const stack = (rd.levels = [level]);
  try {
    for (;;) {
      const top = stack[stack.length - 1];
      if (top.left > 0) {
        top.left--;
        const v = top.next(rd);
        if (v !== PENDING) top.take(rd, v);
        continue;
      }
      const v = top.value(rd);
      stack.pop();
      rd.depth = depth + stack.length;
      if (stack.length === 0) return v;
      stack[stack.length - 1].take(rd, v);
    }
  } finally {
    rd.levels = null;
  }
}

export function nestArray(rd: DecoderState, n: number, slot: Slot, depth: number): unknown {
  return nest(rd, new ArrayLevel(n, slot), depth);
}

export function nestShaped(rd: DecoderState, info: ShapeInfo, slots: Slot[], depth: number): unknown {
  return nest(rd, new ShapedLevel(info, slots), depth);
}

export function nestGenericMap(rd: DecoderState, n: number, at: number, slot: Slot, depth: number): unknown {
  return nest(rd, new GenericMapLevel(n, at, slot), depth);
}
