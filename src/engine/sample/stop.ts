// Stop strings over streamed text. Fed the decoded pieces one at a time, the matcher releases only
// text that cannot be the start of a stop string, so the UI never shows half of "<|im_end|>", and
// reports the stop when one completes (the stop string itself and anything after it are dropped).

export interface StopPush {
  /** Text now safe to show (may be ''). */
  text: string;
  /** True once a stop string has completed; later pushes return ''. */
  stopped: boolean;
  /** The stop string that matched, or null. */
  stop: string | null;
}

export class StopStringMatcher {
  private readonly stops: readonly string[];
  private held = '';
  private matched: string | null = null;

  constructor(stops: readonly string[]) {
    this.stops = [...new Set(stops.filter((s) => s.length > 0))];
  }

  get stopped(): boolean {
    return this.matched !== null;
  }

  push(piece: string): StopPush {
    if (this.matched !== null) return { text: '', stopped: true, stop: this.matched };
    const buf = this.held + piece;

    // The earliest complete stop string wins (the longest one if several start there).
    let at = -1;
    let which: string | null = null;
    for (const s of this.stops) {
      const i = buf.indexOf(s);
      if (i >= 0 && (at < 0 || i < at || (i === at && s.length > which!.length))) {
        at = i;
        which = s;
      }
    }
    if (which !== null) {
      this.matched = which;
      this.held = '';
      return { text: buf.slice(0, at), stopped: true, stop: which };
    }

    // Hold back the longest tail of buf that is a proper prefix of some stop string.
    const keep = this.longestPrefixTail(buf);
    this.held = buf.slice(buf.length - keep);
    return { text: buf.slice(0, buf.length - keep), stopped: false, stop: null };
  }

  /** The end of the stream without a stop: release what was held back. */
  flush(): string {
    const t = this.matched === null ? this.held : '';
    this.held = '';
    return t;
  }

  private longestPrefixTail(buf: string): number {
    let best = 0;
    for (const s of this.stops) {
      for (let len = Math.min(s.length - 1, buf.length); len > best; len--) {
        if (buf.endsWith(s.slice(0, len))) {
          best = len;
          break;
        }
      }
    }
    return best;
  }
}
