// The selected tensor, every fact about it.

import type { OpenedModel, TensorRow } from '../../shared/contract.js';
import { formatBytes, formatInt } from '../lib/format.js';
import { bitsPerWeight, shapeText } from '../lib/tensors.js';
import { TensorStatsPanel } from './TensorStatsPanel.js';

export function TensorDetails({ tensor, model, onClose }: { tensor: TensorRow; model: OpenedModel; onClose: () => void }) {
  const facts: [string, string][] = [
    ['Type', `${tensor.type} (ggml type ${tensor.typeId})`],
    ['Shape', shapeText(tensor.dims)],
    ['ne (ggml order)', `[${tensor.dims.join(', ')}]`],
    ['Elements', formatInt(tensor.elements)],
    ['Bytes', `${formatInt(tensor.bytes)} (${formatBytes(tensor.bytes)})`],
    ['Bits per weight', bitsPerWeight(tensor).toFixed(2)],
    ['Offset in data', formatInt(tensor.offset)],
    ['Offset in file', formatInt(model.dataOffset + tensor.offset)],
    ['Layer', tensor.layer === null ? '—' : `blk.${tensor.layer}`],
  ];
  return (
    <section className="tensor-details" aria-label="Tensor details">
      <header className="array-head">
        <h2 className="mono">{tensor.name}</h2>
        <button type="button" className="icon-button" aria-label="Close tensor details" onClick={onClose}>
          ×
        </button>
      </header>
      <dl className="facts">
        {facts.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd className="mono">{v}</dd>
          </div>
        ))}
      </dl>
      <TensorStatsPanel tensor={tensor} />
    </section>
  );
}
