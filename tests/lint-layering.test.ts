// The layering rule (CONVENTIONS.md §1): a wrong import across a runtime boundary fails lint.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

const eslint = new ESLint({ cwd: ROOT });

async function lint(path: string, code: string): Promise<string[]> {
  const [res] = await eslint.lintText(code, { filePath: `${ROOT}/${path}` });
  return res.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('layering lint rule', () => {
  it('engine may not import electron or the renderer', async () => {
    expect(await lint('src/engine/x.ts', "import { app } from 'electron';\nexport const a = app;\n")).toEqual([expect.stringMatching(/src\/engine runs in Node workers/)]);
    expect(await lint('src/engine/x.ts', "import { a } from '../renderer/y.js';\nexport const b = a;\n")).toHaveLength(1);
    expect(await lint('src/engine/x.ts', "import { readFileSync } from 'node:fs';\nexport const b = readFileSync;\n")).toEqual([]);
  });
  it('shared may not import Node or engine', async () => {
    expect(await lint('src/shared/x.ts', "import { readFileSync } from 'node:fs';\nexport const b = readFileSync;\n")).toHaveLength(1);
    expect(await lint('src/shared/x.ts', "import { a } from '../engine/y.js';\nexport const b = a;\n")).toHaveLength(1);
  });
  it('renderer may not import Node, electron or engine', async () => {
    expect(await lint('src/renderer/x.ts', "import { join } from 'node:path';\nexport const b = join;\n")).toHaveLength(1);
    expect(await lint('src/renderer/x.ts', "import { ipcRenderer } from 'electron';\nexport const b = ipcRenderer;\n")).toHaveLength(1);
    expect(await lint('src/renderer/x.ts', "import { a } from '../engine/gguf/index.js';\nexport const b = a;\n")).toHaveLength(1);
    expect(await lint('src/renderer/x.ts', "import type { Chat } from '../shared/contract.js';\nexport type B = Chat;\n")).toEqual([]);
  });
  it('backend may not import model or sample', async () => {
    expect(await lint('src/engine/backend/x.ts', "import { addInto } from '../model/ops.js';\nexport const b = addInto;\n")).toEqual([expect.stringMatching(/src\/engine\/backend sits under the model/)]);
    expect(await lint('src/engine/backend/x.ts', "import { sliceTop } from '../sample/slices.js';\nexport const b = sliceTop;\n")).toHaveLength(1);
    expect(await lint('src/engine/backend/x.ts', "import { app } from 'electron';\nexport const b = app;\n")).toHaveLength(1);
    expect(await lint('src/engine/backend/x.ts', "import { rowBytes } from '../gguf/ggml-types.js';\nimport { FUSED_TOP_MAX } from './logit-stats.js';\nexport const b = [rowBytes, FUSED_TOP_MAX];\n")).toEqual([]);
    expect(await lint('src/engine/model/x.ts', "import { addInto } from '../backend/vec.js';\nexport const b = addInto;\n")).toEqual([]);
  });
  it('main services are plain Node', async () => {
    expect(await lint('src/main/services/x.ts', "import { app } from 'electron';\nexport const b = app;\n")).toEqual([expect.stringMatching(/src\/main\/services is plain Node/)]);
    expect(await lint('src/main/services/x.ts', "import { createWindow } from '../window.js';\nexport const b = createWindow;\n")).toHaveLength(1);
    expect(await lint('src/main/services/x.ts', "import { readFileSync } from 'node:fs';\nimport { ModelError } from '../../shared/errors.js';\nimport { log } from './log.js';\nexport const b = [readFileSync, ModelError, log];\n")).toEqual([]);
    expect(await lint('src/main/x.ts', "import { app } from 'electron';\nexport const b = app;\n")).toEqual([]);
  });
  it('only main imports electron', async () => {
    expect(await lint('src/main/x.ts', "import { app } from 'electron';\nexport const b = app;\n")).toEqual([]);
    expect(await lint('src/cli/x.ts', "import { app } from 'electron';\nexport const b = app;\n")).toHaveLength(1);
  });
});
