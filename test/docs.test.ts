// Documentation that cannot drift: the per-command pages are regenerated from --help and compared.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers/cli.js';

describe('docs', () => {
  it("docs/commands matches every command's --help", () => {
    const out = execFileSync(process.execPath, [path.join(ROOT, 'scripts/command-docs.mjs'), '--check'], { encoding: 'utf8' });
    expect(out).toMatch(/up to date \(\d+ pages\)/);
  }, 120_000);

  it('every page the README links to exists', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\((docs\/[^)]+)\)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThan(5);
    for (const l of links) expect(existsSync(path.join(ROOT, l)), l).toBe(true);
  });
});
