import { describe, expect, it } from 'vitest';
import { StopStringMatcher } from '../../src/engine/sample/index.js';

/** Feed pieces; return what the UI would have shown and where it stopped. */
function stream(stops: string[], pieces: string[]): { shown: string; stop: string | null; shownAfterEach: string[] } {
  const m = new StopStringMatcher(stops);
  let shown = '';
  const shownAfterEach: string[] = [];
  let stop: string | null = null;
  for (const p of pieces) {
    const r = m.push(p);
    shown += r.text;
    shownAfterEach.push(shown);
    if (r.stopped) {
      stop = r.stop;
      break;
    }
  }
  if (stop === null) shown += m.flush();
  return { shown, stop, shownAfterEach };
}

describe('StopStringMatcher', () => {
  it('never shows part of a stop string split across pieces', () => {
    const r = stream(['<|im_end|>'], ['Hello', ' there', '<|', 'im', '_end', '|>', 'ignored']);
    expect(r.shown).toBe('Hello there');
    expect(r.stop).toBe('<|im_end|>');
    expect(r.shownAfterEach).toEqual(['Hello', 'Hello there', 'Hello there', 'Hello there', 'Hello there', 'Hello there']);
  });

  it('releases held text when the would-be stop turns out not to be one', () => {
    const r = stream(['<|im_end|>'], ['a <', '|b', 'c']);
    expect(r.shownAfterEach).toEqual(['a ', 'a <|b', 'a <|bc']);
    expect(r.stop).toBeNull();
  });

  it('plain-style stop "\\nUser:" inside one piece; text before it is kept', () => {
    const r = stream(['\nUser:'], ['Once upon a time.\nUs', 'er: more']);
    expect(r.shown).toBe('Once upon a time.');
    expect(r.stop).toBe('\nUser:');
  });

  it('the earliest of several stops wins', () => {
    const r = stream(['END', '</s>'], ['x</s>yEND']);
    expect(r.shown).toBe('x');
    expect(r.stop).toBe('</s>');
  });

  it('flush releases a held tail at the end of the stream', () => {
    const m = new StopStringMatcher(['<|eot_id|>']);
    expect(m.push('done <|eot').text).toBe('done ');
    expect(m.flush()).toBe('<|eot');
    expect(m.stopped).toBe(false);
  });

  it('after a stop, further pushes show nothing', () => {
    const m = new StopStringMatcher(['</s>']);
    expect(m.push('a</s>b')).toEqual({ text: 'a', stopped: true, stop: '</s>' });
    expect(m.push('more')).toEqual({ text: '', stopped: true, stop: '</s>' });
    expect(m.flush()).toBe('');
  });

  it('no stop strings: everything passes straight through', () => {
    expect(stream([], ['<|im_', 'end|>']).shownAfterEach).toEqual(['<|im_', '<|im_end|>']);
  });
});
