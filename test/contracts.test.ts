// The committed contract artifacts must be what the Solidity sources compile to: stamped with the hash of the
// sources, checked here; compiled afresh with solc-js and compared byte for byte in test/contracts.cli.test.ts (a
// compiler run of tens of seconds, too long for the unit layer).
import { describe, expect, it } from 'vitest';
import { SOURCES_HASH } from '../src/sandbox/contracts/artifacts.js';

describe('sandbox contract artifacts', () => {
  it('are stamped with the hash of the current sources and compiler settings', async () => {
    const { sourcesHash } = await import('../scripts/build-contracts.mjs');
    expect(SOURCES_HASH).toBe(sourcesHash());
  });
});
