// Documentation that cannot drift: the per-command pages are regenerated from --help and compared. The script runs
// the built program (dist/cli.cjs and the bin), so this needs the build: the cli layer.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './helpers/cli.js';

describe('docs', () => {
  it("docs/commands matches every command's --help", () => {
    const out = execFileSync(process.execPath, [path.join(ROOT, 'scripts/command-docs.mjs'), '--check'], { encoding: 'utf8' });
    expect(out).toMatch(/up to date \(\d+ pages\)/);
  });
});
