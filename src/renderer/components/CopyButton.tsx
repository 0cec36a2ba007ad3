// A small "Copy" button; says "Copied" for a moment after it worked.

import { useState } from 'react';

async function writeClipboard(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) {
    await navigator.clipboard.writeText(text);
    return;
  }
  throw new Error('The clipboard is not available.');
}

export function CopyButton({ getText, label }: { getText: () => string | Promise<string>; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const onClick = async (): Promise<void> => {
    try {
      await writeClipboard(await getText());
      setState('copied');
    } catch {
      setState('failed');
    }
    setTimeout(() => setState('idle'), 1500);
  };
  return (
    <button type="button" className="small-button" aria-label={label} title={label} onClick={() => void onClick()}>
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Failed' : 'Copy'}
    </button>
  );
}
