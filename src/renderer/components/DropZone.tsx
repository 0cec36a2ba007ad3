// A .gguf dropped anywhere on the window opens it; while a file is dragged over, say so.

import { useEffect, useState } from 'react';
import { useApp } from '../store/app.js';

function hasFiles(e: DragEvent): boolean {
  return !!e.dataTransfer && Array.from(e.dataTransfer.types).includes('Files');
}

export function DropZone() {
  const [over, setOver] = useState(false);
  const openDropped = useApp((s) => s.openDropped);

  useEffect(() => {
    let depth = 0;
    const enter = (e: DragEvent): void => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      depth++;
      setOver(true);
    };
    const overFn = (e: DragEvent): void => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
    };
    const leave = (e: DragEvent): void => {
      if (!hasFiles(e)) return;
      depth = Math.max(0, depth - 1);
      if (depth === 0) setOver(false);
    };
    const drop = (e: DragEvent): void => {
      // Never let the browser navigate to a dropped file.
      e.preventDefault();
      depth = 0;
      setOver(false);
      const files = Array.from(e.dataTransfer?.files ?? []);
      if (!files.length) return;
      const file = files.find((f) => /\.gguf$/i.test(f.name)) ?? files[0];
      void openDropped(file);
    };
    window.addEventListener('dragenter', enter);
    window.addEventListener('dragover', overFn);
    window.addEventListener('dragleave', leave);
    window.addEventListener('drop', drop);
    return () => {
      window.removeEventListener('dragenter', enter);
      window.removeEventListener('dragover', overFn);
      window.removeEventListener('dragleave', leave);
      window.removeEventListener('drop', drop);
    };
  }, [openDropped]);

  if (!over) return null;
  return (
    <div className="drop-overlay" aria-hidden="true">
      <div className="drop-card">Drop a .gguf model file to open it</div>
    </div>
  );
}
