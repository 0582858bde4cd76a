// One run at a time across processes (src/store/claims.ts), with real processes on one database: waiters that all
// find a dead holder never hold the claim together (the lock files of earlier versions let two waiters both "take
// over" a dead owner's lock in 2 of 20 trials), a killed holder's claim is taken over, and a live holder's is not.
// Needs the build (build/store/): the claimants are separate node processes (the cli layer; two holders in one process:
// test/claims.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './helpers/cli.js';
import { Store } from '../src/store/db.js';
import { capture } from './helpers/capture.js';

const built = (m: string) => pathToFileURL(path.join(ROOT, 'build', 'store', m)).href;
// A claimant: waits for the claim, holds it for HOLD ms, prints when it held it, releases it.
const CLAIMANT = `
const { Store } = await import(${JSON.stringify(built('db.js'))});
const { claim } = await import(${JSON.stringify(built('claims.js'))});
const [dir, name, hold] = process.argv.slice(1);
const store = await Store.open(dir);
const c = await claim(store, name, { waitMs: 60000, busy: () => new Error('busy') });
const from = performance.timeOrigin + performance.now();
if (hold === 'forever') { process.stdout.write('held\\n'); setInterval(() => {}, 1000); }
else {
  await new Promise((r) => setTimeout(r, Number(hold)));
  const to = performance.timeOrigin + performance.now();
  await c.release();
  process.stdout.write(JSON.stringify({ from, to }) + '\\n');
}
`;

function claimant(dir: string, name: string, hold: string) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', CLAIMANT, dir, name, hold], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const done = new Promise<{ code: number | null; out: string; err: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, out, err })),
  );
  return { child, done, out: () => out };
}

let dir: string;
let store: Store;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'loopsign-claims-'));
  store = await Store.open(dir);
});
afterAll(() => store.close());

const overlaps = (spans: { from: number; to: number }[]) => {
  const s = [...spans].sort((a, b) => a.from - b.from);
  return s.some((x, i) => i > 0 && x.from < s[i - 1]!.to);
};

describe('claims across processes', () => {
  it.each(Array.from({ length: 10 }, (_, i) => i))(
    'trial %i: six waiters find a dead holder; they hold the claim one after another, never together',
    async (trial) => {
      const name = `operation:race-${trial}`;
      // A holder that is gone: a process id no process has, claimed "before".
      store.read((db) =>
        db.prepare("INSERT INTO claims (name, pid, started, boot, token, claimed_at) VALUES (?, 2147483646, '1', '', 'dead', 0)").run(name),
      );
      const runs = Array.from({ length: 6 }, () => claimant(dir, name, '60'));
      const results = await Promise.all(runs.map((r) => r.done));
      for (const r of results) expect(r.code, r.err).toBe(0);
      const spans = results.map((r) => JSON.parse(r.out.trim()) as { from: number; to: number });
      expect(overlaps(spans), JSON.stringify(spans)).toBe(false);
      capture.count('claim trials: six waiters on a dead holder', String(trial));
    },
  );

  it('a holder killed with SIGKILL is taken over; a live holder is not', async () => {
    const name = 'operation:killed';
    const holder = claimant(dir, name, 'forever');
    await new Promise<void>((resolve) => holder.child.stdout.on('data', () => holder.out().includes('held') && resolve()));
    const { tryClaim } = await import('../src/store/claims.js');
    expect(await tryClaim(store, name), 'a live holder keeps it').toBeUndefined();
    holder.child.kill('SIGKILL');
    await holder.done;
    const taken = await tryClaim(store, name);
    expect(taken, 'a dead holder does not').toBeDefined();
    // And this process, holding it now, is a live holder to everyone else.
    const other = claimant(dir, name, '0');
    const late = await Promise.race([other.done, new Promise((r) => setTimeout(() => r('waiting'), 1500))]);
    expect(late).toBe('waiting');
    await taken!.release();
    expect((await other.done).code).toBe(0);
  });

  // A process killed whose parent has not collected it yet (a harness that never waits, a container whose first
  // process does not reap orphans) stays in the process table as a zombie: signalable, with its start time. It runs
  // nothing, so it holds nothing; otherwise every rerun would be refused until its parent happened to reap it.
  it('a holder killed but not yet reaped by its parent (a zombie) holds nothing', async () => {
    const name = 'operation:zombie';
    // The claimant's parent is a shell that execs into sleep: nothing ever waits for the claimant.
    const parent = spawn(
      'sh',
      ['-c', `"$0" --input-type=module -e "$1" "$2" "$3" forever & exec sleep 60`, process.execPath, CLAIMANT, dir, name],
      { stdio: 'ignore' },
    );
    const { tryClaim } = await import('../src/store/claims.js');
    let pid: number | undefined;
    for (let i = 0; i < 600 && pid === undefined; i++) {
      await new Promise((r) => setTimeout(r, 50));
      pid = store.read((db) => (db.prepare('SELECT pid FROM claims WHERE name = ?').get(name) as { pid: number } | undefined)?.pid);
    }
    expect(pid, 'the claimant took the claim').toBeDefined();
    expect(await tryClaim(store, name), 'a live holder keeps it').toBeUndefined();
    process.kill(pid!, 'SIGKILL');
    const state = () => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0];
    for (let i = 0; i < 200 && state() !== 'Z'; i++) await new Promise((r) => setTimeout(r, 25));
    expect(state(), 'the killed claimant is a zombie, not reaped').toBe('Z');
    const taken = await tryClaim(store, name);
    expect(taken, 'a zombie holds nothing').toBeDefined();
    await taken!.release();
    parent.kill('SIGKILL');
  });

  it.each([0, 1, 2, 3])(
    'trial %i: six processes opening a new database at once all open it (switching it to WAL waits, it does not fail)',
    async () => {
      const fresh = mkdtempSync(path.join(tmpdir(), 'loopsign-open-'));
      const OPEN = `const { Store } = await import(${JSON.stringify(built('db.js'))}); (await Store.open(process.argv[1])).close(); process.stdout.write('opened');`;
      const runs = Array.from({ length: 6 }, () =>
        spawn(process.execPath, ['--input-type=module', '-e', OPEN, fresh], { stdio: ['ignore', 'pipe', 'pipe'] }),
      );
      const results = await Promise.all(
        runs.map(
          (child) =>
            new Promise<string>((resolve) => {
              let text = '';
              child.stdout.on('data', (d) => (text += d));
              child.stderr.on('data', (d) => (text += d));
              child.on('close', () => resolve(text));
            }),
        ),
      );
      expect(results).toEqual(Array(6).fill('opened'));
    },
  );
});
