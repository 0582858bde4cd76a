// A file that is not JSON is reported by where it broke, never by what it says there (issue 20 §3): V8's own
// message quotes the start of the text, which for the wrong file is the start of a secret.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readUserJson } from '../src/fsutil.js';
import { readPolicyFile } from '../src/policy/file.js';
import { jsonProblem } from '../src/json-problem.js';
import { parseEvidenceText } from '../src/evidence/files.js';

const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-json-'));
const SECRETS = ['hunter2\n', 'PATH=/usr/bin\u0000HOME=/root', '{"a": hunter2}', '[1, 2, secretvalue]', '{"k": "v", oops}', '\n\n  xyzzy'];

describe('JSON problems are told without quoting the text', () => {
  it.each(SECRETS)('%j: the message says where, not what', async (text) => {
    const file = path.join(dir, `f-${Math.random()}.json`);
    writeFileSync(file, text);
    const words = text.split(/[^A-Za-z0-9]+/).filter((w) => w.length >= 4);
    for (const read of [
      () => readUserJson(file, 'ask file'),
      () => readPolicyFile(file, 'flag'),
      async () => parseEvidenceText(text, file),
    ]) {
      const error = await Promise.resolve()
        .then(read)
        .then(
          () => undefined,
          (e: Error) => e,
        );
      expect(error?.message).toMatch(/not (valid|usable) JSON/);
      for (const w of words) expect(error!.message.replace(file, '')).not.toContain(w);
    }
  });

  it('gives the line and column when the parser told the position', () => {
    const text = '{\n  "a": 1,\n  "b": x\n}';
    let error: unknown;
    try {
      JSON.parse(text);
    } catch (e) {
      error = e;
    }
    expect(jsonProblem(error, text)).toMatch(/^not valid JSON( \(line 3, column \d+\))?$/);
    expect(jsonProblem(new SyntaxError('Unexpected end of JSON input'), '{')).toBe('not valid JSON (it ends too early)');
  });
});
