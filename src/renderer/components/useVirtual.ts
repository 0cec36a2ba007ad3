// Fixed-row-height virtualisation: which rows of a scrolled container to render, and the space to
// leave above and below them. Used by the metadata array list and the tensor table.

import { useCallback, useEffect, useState, type RefObject } from 'react';

export interface VirtualWindow {
  start: number;
  end: number;
  padTop: number;
  padBottom: number;
  onScroll(): void;
}

export function useVirtual(ref: RefObject<HTMLElement | null>, count: number, rowHeight: number, overscan = 8): VirtualWindow {
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);

  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    setHeight(el.clientHeight || 600);
    const ro = new ResizeObserver(() => setHeight(el.clientHeight || 600));
    ro.observe(el);
    return () => ro.disconnect();
  }, [ref]);

  const onScroll = useCallback(() => {
    const el = ref.current;
    if (el) setScrollTop(el.scrollTop);
  }, [ref]);

  const start = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const end = Math.min(count, Math.ceil((scrollTop + height) / rowHeight) + overscan);
  return { start, end, padTop: start * rowHeight, padBottom: Math.max(0, (count - end) * rowHeight), onScroll };
}
