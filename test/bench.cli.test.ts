// `npm run bench` runs against the built dist/ and calls core modules directly, so a change of their signatures breaks
// it without any other test noticing (the policy suite still passed the old PolicyGate.load arguments after the
// environment became a value; the ask suite read a journal file issue 20 replaced). Its quickest suite runs here.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/cli.js';

describe('npm run bench', () => {
  it('the policy suite runs on the built code and prints its three rows', () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'bench', 'run.mjs'), 'policy'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const rows = r.stdout.split('\n').filter((l) => l.startsWith('policy check, '));
    expect(rows.map((l) => l.match(/^policy check, (\d+) operations/)?.[1])).toEqual(['100', '1000', '10000']);
  });
});
