// The scanner behind the secrets suite (test/setup/secrets-scan.ts) must find a planted secret wherever
// loopsign could leak it: its output, its arguments, a journal, a config file. Otherwise the suite proves nothing.
import { describe, expect, it } from 'vitest';
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { scanCapture } from './helpers/capture.js';

const SECRET = 'ab'.repeat(32);

function captureWith(run: { args: string[]; stdout: string; stderr: string }, journal: string) {
  const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-scan-'));
  const home = mkdtempSync(path.join(tmpdir(), 'loopsign-scan-home-'));
  mkdirSync(path.join(home, 'state', 'loopsign', 'journal'), { recursive: true });
  writeFileSync(path.join(home, 'state', 'loopsign', 'journal', 'ask-1.json'), journal);
  // The test's own input files at the home's top level are not loopsign's output.
  writeFileSync(path.join(home, 'pw-1.txt'), SECRET);
  appendFileSync(path.join(dir, 'secrets-1.jsonl'), JSON.stringify(SECRET) + '\n');
  appendFileSync(path.join(dir, 'homes-1.jsonl'), JSON.stringify(home) + '\n');
  appendFileSync(path.join(dir, 'runs-1.jsonl'), JSON.stringify(run) + '\n');
  return { dir, home };
}

describe('secrets scan', () => {
  it('is clean when nothing leaked, and counts what it read', () => {
    const { dir } = captureWith({ args: ['wallet', 'address'], stdout: '0x1234\n', stderr: '' }, '{"step":"ask:planned"}');
    expect(scanCapture(dir)).toEqual({ runs: 1, files: 1, secrets: 1, leaks: [] });
  });

  it('finds a secret in stdout, stderr or argv (any case) and in a journal', () => {
    const { dir, home } = captureWith(
      { args: ['wallet', 'import', `0x${SECRET.toUpperCase()}`], stdout: `key ${SECRET}`, stderr: '' },
      `{"key":"0x${SECRET}"}`,
    );
    const report = scanCapture(dir);
    expect(report.leaks).toEqual([
      'output of loopsign wallet import 0x' + SECRET.toUpperCase(),
      path.join(home, 'state', 'loopsign', 'journal', 'ask-1.json'),
    ]);
  });
});
