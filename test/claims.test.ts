// One run at a time within one process too (src/store/claims.ts): an MCP server runs several tools at once, and two
// runs of the same operation there are two holders. Across processes (dead, killed and zombie holders; many
// processes opening one database): test/claims.cli.test.ts, whose claimants run the build.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store } from '../src/store/db.js';
import { tryClaim } from '../src/store/claims.js';

let dir: string;
let store: Store;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'loopsign-claims-'));
  store = await Store.open(dir);
});
afterAll(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('claims in one process', () => {
  it('two runs in one process (an MCP server) are two holders', async () => {
    const first = await tryClaim(store, 'operation:same-process');
    expect(first).toBeDefined();
    expect(await tryClaim(store, 'operation:same-process')).toBeUndefined();
    await first!.release();
    expect(await tryClaim(store, 'operation:same-process')).toBeDefined();
  });
});
