// The committed contract artifacts must be what the Solidity sources compile to, byte for byte: a fresh solc-js
// compile in a child process (scripts/build-contracts.mjs --check). No build is needed, but the compiler takes tens of
// seconds on two cores, too long for the unit layer; the stamp of the sources' hash is checked there
// (test/contracts.test.ts).
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './helpers/cli.js';

describe('sandbox contract artifacts', () => {
  it('are byte-identical to a fresh solc-js compile', () => {
    const out = execFileSync(process.execPath, [path.join(ROOT, 'scripts/build-contracts.mjs'), '--check'], { encoding: 'utf8' });
    expect(out).toMatch(/up to date/);
  });
});
