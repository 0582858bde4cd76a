// The cross-process lock under the journal and the wallet: refused or waited for while a live process holds it,
// taken over at once from a dead one, and never confused with a filesystem error.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { acquireLock } from '../src/journal/lock.js';

const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-lock-'));
const locked = () => new Error('locked');

describe('acquireLock', () => {
  it('refuses a held lock at once, or waits for its release', async () => {
    const file = path.join(dir, 'a');
    const release = await acquireLock(file, { locked });
    await expect(acquireLock(file, { locked })).rejects.toThrow('locked');
    const waiting = acquireLock(file, { waitMs: 10_000, locked });
    let got = false;
    void waiting.then(() => (got = true));
    await new Promise((r) => setTimeout(r, 200));
    expect(got).toBe(false);
    await release();
    await (await waiting)();
  });

  it('gives up waiting after waitMs', async () => {
    const file = path.join(dir, 'b');
    const release = await acquireLock(file, { locked });
    await expect(acquireLock(file, { waitMs: 300, locked })).rejects.toThrow('locked');
    await release();
  });

  it('takes over at once a lock whose owner died', async () => {
    const file = path.join(dir, 'c');
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    mkdirSync(`${file}.lock`);
    writeFileSync(`${file}.pid`, String(dead));
    await (await acquireLock(file, { locked }))();
  });

  it('reports a filesystem error as itself, not as a held lock', async () => {
    await expect(acquireLock(path.join(dir, 'missing', 'd'), { waitMs: 5_000, locked })).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
