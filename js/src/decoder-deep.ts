// Containers nested deeper than the decoder recurses (RECURSION_DEPTH in
// decoder.ts) are decoded here, level by level from an explicit stack, so
// the nesting an input may have is bounded by maxDepth and memory, never by
// the JavaScript stack. Items are read by the decoder's own read(): a
// container among them parses its header there (with every check, in order)
// and comes back as a new level, whose value is delivered when it completes.

import { read, setDepth, nextTag, setExactFloats, exactKeyTag, shapedValue, MapBuilder } from './decoder.js';
import type { Slot, ShapeInfo } from './decoder.js';

/** Returned by read() for a container that was stacked as a level instead of decoded. */
export const PENDING: unknown = Object.freeze({ pending: true });

/** A container whose header is read: `next()` reads one item, `take()` receives it, `value()` builds the container. */
interface Level {
  left: number;
  next(): unknown;
  take(v: unknown): void;
  value(): unknown;
}

class ArrayLevel implements Level {
  readonly a: unknown[] = [];
  constructor(
    public left: number,
    readonly slot: Slot,
  ) {}
  next(): unknown {
    return read(this.slot);
  }
  take(v: unknown): void {
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
  next(): unknown {
    return read(this.slots[this.values.length]);
  }
  take(v: unknown): void {
    this.values.push(v);
  }
  value(): unknown {
    return shapedValue(this.info, this.values);
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
  next(): unknown {
    const b = this.b;
    if (b.ks.length === b.vs.length) {
      const t = (this.keyTag = nextTag());
      if (exactKeyTag(t)) this.exactBefore = setExactFloats(true);
    }
    return read(this.slot);
  }
  take(v: unknown): void {
    const b = this.b;
    if (b.ks.length === b.vs.length) {
      if (exactKeyTag(this.keyTag)) setExactFloats(this.exactBefore);
      b.key(this.keyTag, v);
    } else b.vs.push(v);
  }
  value(): unknown {
    return this.b.result();
  }
}

let levels: Level[] | null = null;

/**
 * Decodes the items of a container whose header is read, at nesting
 * `depth`. Inside a level's items it only stacks the level (and read()
 * returns PENDING); otherwise it decodes every level until this one is
 * complete and returns its value.
 */
function nest(level: Level, depth: number): unknown {
  setDepth(depth + 1);
  if (levels !== null) {
    levels.push(level);
    return PENDING;
  }
  const stack = (levels = [level]);
  try {
    for (;;) {
      const top = stack[stack.length - 1];
      if (top.left > 0) {
        top.left--;
        const v = top.next();
        if (v !== PENDING) top.take(v);
        continue;
      }
      const v = top.value();
      stack.pop();
      setDepth(depth + stack.length);
      if (stack.length === 0) return v;
      stack[stack.length - 1].take(v);
    }
  } finally {
    levels = null;
  }
}

export function nestArray(n: number, slot: Slot, depth: number): unknown {
  return nest(new ArrayLevel(n, slot), depth);
}

export function nestShaped(info: ShapeInfo, slots: Slot[], depth: number): unknown {
  return nest(new ShapedLevel(info, slots), depth);
}

export function nestGenericMap(n: number, at: number, slot: Slot, depth: number): unknown {
  return nest(new GenericMapLevel(n, at, slot), depth);
}

/** For a re-entrant decode (from an extension's read): its containers must not join the outer stack. */
export function suspendLevels(): Level[] | null {
  const l = levels;
  levels = null;
  return l;
}

export function resumeLevels(l: Level[] | null): void {
  levels = l;
}
