// The committed contract artifacts must be what the Solidity sources compile to.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { SOURCES_HASH } from '../src/sandbox/contracts/artifacts.js';
import { ROOT } from './helpers/cli.js';

describe('sandbox contract artifacts', () => {
  it('are stamped with the hash of the current sources and compiler settings', async () => {
    const { sourcesHash } = await import('../scripts/build-contracts.mjs');
    expect(SOURCES_HASH).toBe(sourcesHash());
  });

  it('are byte-identical to a fresh solc-js compile', () => {
    const out = execFileSync(process.execPath, [path.join(ROOT, 'scripts/build-contracts.mjs'), '--check'], { encoding: 'utf8' });
    expect(out).toMatch(/up to date/);
  }, 120_000);
});
