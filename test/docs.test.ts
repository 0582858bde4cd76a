// Documentation that cannot drift: every page the README links to exists. The per-command pages, regenerated from the
// built --help and compared: test/docs.cli.test.ts.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers/cli.js';

describe('docs', () => {
  it('every page the README links to exists', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\((docs\/[^)]+)\)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThan(5);
    for (const l of links) expect(existsSync(path.join(ROOT, l)), l).toBe(true);
  });
});
