// Containers nested deeper than the encoder recurses (RECURSION_DEPTH in
// encoder-values.ts) are written here, level by level from an explicit stack, so
// the nesting a value may have is bounded by maxDepth and memory, never by
// the JavaScript stack. Items are written by the encoder's own writeValue: a
// container among them writes its header there and comes back as a new level.

import { writeValue } from './encoder-values.js';
import type { EncoderState, ESlot, Level } from './encoder-state.js';

export class ArrayLevel implements Level {
  i = 0;
  constructor(readonly a: unknown[], readonly n: number, readonly slot: ESlot) {}
  next(st: EncoderState): void {
    writeValue(st, this.a[this.i++], this.slot);
  }
}

/** An object's values for the keys of its header (read when written, as in writeObject). */
export class ObjectLevel implements Level {
  i = 0;
  readonly n: number;
  constructor(readonly o: Record<string, unknown>, readonly keys: string[], readonly slots: ESlot[]) {
    this.n = keys.length;
  }
  next(st: EncoderState): void {
    const i = this.i++;
    writeValue(st, this.o[this.keys[i]], this.slots[i]);
  }
}

/** A shaped Map's values for the keys of its header. */
export class MapLevel implements Level {
  i = 0;
  readonly n: number;
  constructor(readonly m: Map<unknown, unknown>, readonly keys: unknown[], readonly slots: ESlot[]) {
    this.n = keys.length;
  }
  next(st: EncoderState): void {
    const i = this.i++;
    writeValue(st, this.m.get(this.keys[i]), this.slots[i]);
  }
}

/** A generic map's keys and values, alternately, for the keys counted in its header. */
export class GenericMapLevel implements Level {
  i = 0;
  readonly n: number;
  constructor(readonly m: Map<unknown, unknown>, readonly keys: unknown[], readonly slot: ESlot) {
    this.n = 2 * keys.length;
  }
  next(st: EncoderState): void {
    const i = this.i++;
    const k = this.keys[i >> 1];
    writeValue(st, i & 1 ? this.m.get(k) : k, this.slot);
  }
}

/**
 * Writes the items of a container whose header is written, at nesting
 * `depth`. Inside a level's items it only stacks the level; otherwise it
 * writes every level until this one is complete.
 */
export function nest(st: EncoderState, level: Level, depth: number): void {
  st.depth = depth + 1;
  if (st.levels !== null) {
    st.levels.push(level);
    return;
  }
  const stack = (st.levels = [level]);
  try {
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      if (top.i < top.n) top.next(st);
      else {
        stack.pop();
        st.depth = depth + stack.length;
      }
    }
  } finally {
    st.levels = null;
  }
}
