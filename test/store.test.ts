// The database itself (issue 20): legacy JSON journals imported once, kept read-only, unreadable ones reported every
// time and never dropped; a state folder on a network filesystem refused; a database from a newer loopsign refused;
// a row edited by hand read as an error naming it, never as an `as` cast; and the policy windows' query timed at
// 10,000 operations by the bench (bench/policy.mjs), here only checked for its answer.
import { describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import Database from 'better-sqlite3';
import { Store } from '../src/store/db.js';
import { importJournals } from '../src/store/import.js';
import { findByOperationKey, Operation, readOperation } from '../src/store/operation.js';
import { windowUsage } from '../src/policy/usage.js';
import { spendHistory } from '../src/store/history.js';
import { Output } from '../src/output.js';
import { TEST_PRIVATE_KEY } from './helpers/cli.js';

const fresh = () => mkdtempSync(path.join(tmpdir(), 'loopsign-store-'));
const account = privateKeyToAccount(TEST_PRIVATE_KEY);

function quietOut() {
  const lines: string[] = [];
  const sink = { write: (s: string) => (lines.push(s), true) } as unknown as NodeJS.WritableStream;
  return { out: new Output({ json: true, quiet: false, debug: false }, { stdout: sink, stderr: sink }), lines };
}

async function legacyJournal(dir: string) {
  const raw = await account.signTransaction({
    type: 'eip1559',
    chainId: 31337,
    to: `0x${'0a'.repeat(20)}`,
    data: '0x',
    nonce: 3,
    gas: 21000n,
    maxFeePerGas: 1n,
    maxPriorityFeePerGas: 1n,
  });
  const now = new Date().toISOString();
  return {
    version: 1,
    kind: 'ask',
    id: 'ask-0123456789abcdef0123456789abcdef',
    chainId: 31337,
    wallet: account.address.toLowerCase(),
    createdAt: now,
    updatedAt: now,
    step: 'ask:confirmed',
    clientRequestId: 'legacy-1',
    request: { clientRequestId: 'legacy-1' },
    operationKey: `0x${'ab'.repeat(32)}`,
    txs: [
      {
        stage: 'ask',
        calls: [0, 1],
        hash: `0x${'cd'.repeat(32)}`,
        raw,
        nonce: 3,
        kind: 'call',
        status: 'mined',
        effects: [{ asset: 'USDC', kind: 'pull', spender: `0x${'0b'.repeat(20)}`, amount: '1500000' }],
        signedAt: now,
      },
    ],
    authorizations: [
      {
        stage: 'ask',
        message: {
          from: account.address,
          to: `0x${'0c'.repeat(20)}`,
          value: '700000',
          validAfter: '0',
          validBefore: '99999999999',
          nonce: `0x${'ee'.repeat(32)}`,
        },
        signature: '0x01',
        signedAt: now,
      },
    ],
    _dir: dir,
  };
}

describe('journals of an earlier loopsign', () => {
  it('are imported once with everything they signed (counted by the windows), kept read-only; an unreadable one is reported at every open', async () => {
    const state = fresh();
    const journals = path.join(state, 'journal');
    mkdirSync(journals);
    const { _dir, ...j } = await legacyJournal(journals);
    void _dir;
    writeFileSync(path.join(journals, `${j.id}.json`), JSON.stringify(j));
    writeFileSync(path.join(journals, 'ask-ffffffffffffffffffffffffffffffff.json'), '{"version": 1, "kind": "ask", hunter2');
    const store = await Store.open(state);
    const first = quietOut();
    await importJournals(store, journals, first.out);
    expect(first.lines.join('')).toMatch(/imported 1 journal/);
    expect(first.lines.join('')).toMatch(/ask-ffff.*not valid JSON.*could not be imported/);
    expect(first.lines.join('')).not.toContain('hunter2');
    const op = readOperation(store, 'ask', j.id)!;
    expect(op).toMatchObject({ step: 'ask:confirmed', operationKey: j.operationKey, data: { clientRequestId: 'legacy-1' } });
    expect(op.txs).toMatchObject([{ hash: j.txs[0]!.hash, nonce: 3, status: 'mined', calls: [0, 1] }]);
    expect(op.authorizations).toMatchObject([{ dead: false, message: { value: '700000' } }]);
    expect(windowUsage(store.db, 31337, new Date(0))).toEqual({ USDC: 2_200_000n });
    expect(statSync(path.join(journals, `${j.id}.json`)).mode & 0o777).toBe(0o400);
    // Again: nothing imported twice, the unreadable one reported again.
    const second = quietOut();
    await importJournals(store, journals, second.out);
    expect(second.lines.join('')).not.toMatch(/imported \d+ journal/);
    expect(second.lines.join('')).toMatch(/ask-ffff.*could not be imported/);
    expect(windowUsage(store.db, 31337, new Date(0))).toEqual({ USDC: 2_200_000n });
    store.close();
  });
});

describe('journals of an earlier loopsign that meet a record of the same operation', () => {
  // An earlier loopsign still running after the upgrade (a long-lived MCP server), or journals copied in from another
  // machine: the file names an operation the database already has, and holds signatures the database's record does
  // not. Those may still pay; skipping the file in silence would leave them out of every window.
  it('a file with signatures the database does not have is reported at every open, never skipped in silence', async () => {
    const state = fresh();
    const journals = path.join(state, 'journal');
    mkdirSync(journals);
    const { _dir, ...j } = await legacyJournal(journals);
    void _dir;
    const store = await Store.open(state);
    const op = await Operation.open(store, 'ask', j.id, {
      chainId: 31337,
      wallet: account.address,
      data: { clientRequestId: 'legacy-1', request: {} },
    });
    await op.close();
    writeFileSync(path.join(journals, `${j.id}.json`), JSON.stringify(j));
    for (let run = 0; run < 2; run++) {
      const o = quietOut();
      await importJournals(store, journals, o.out);
      expect(o.lines.join(''), `open ${run}`).toMatch(new RegExp(`${j.id}\\.json .*already in the database.*not counted`));
    }
    // The same record met twice (two processes importing at once) is no problem at all.
    const again = fresh();
    mkdirSync(path.join(again, 'journal'));
    writeFileSync(path.join(again, 'journal', `${j.id}.json`), JSON.stringify(j));
    const other = await Store.open(again);
    await importJournals(other, path.join(again, 'journal'), quietOut().out);
    other.db.prepare("UPDATE imports SET status = 'unreadable'").run();
    const o = quietOut();
    await importJournals(other, path.join(again, 'journal'), o.out);
    expect(o.lines.join('')).not.toMatch(/could not be imported/);
    store.close();
    other.close();
  });
});

describe('where the database may live', () => {
  it('a state folder on a network filesystem is refused with the fix (exit 2)', async () => {
    const error = await Store.open(fresh(), { statfs: () => ({ type: 0x6969 }) }).catch((e) => e);
    expect(error).toMatchObject({ code: 'state_on_network_fs', exitCode: 2 });
    expect(error.message).toMatch(/NFS/);
    expect(error.hint).toMatch(/XDG_STATE_HOME/);
  });

  it('the database file is private (0600) and so is its folder', async () => {
    const dir = fresh();
    chmodSync(dir, 0o755);
    const store = await Store.open(dir);
    expect(statSync(store.file).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    store.close();
  });

  // Another connection holding the database (a run killed mid-write whose log the next opener recovers, several
  // reruns opening it together, sqlite3 with an exclusive lock): opening waits for it instead of failing at once
  // with "database is locked" (4 reruns of a killed ask hit this in about 1 of 13 opens).
  it('opens a database another connection holds locked for a moment, once it is free', async () => {
    const dir = fresh();
    (await Store.open(dir)).close();
    const holder = new Database(path.join(dir, 'loopsign.db'));
    holder.pragma('locking_mode = EXCLUSIVE');
    holder.exec('BEGIN EXCLUSIVE');
    const opening = Store.open(dir).then(
      (store) => (store.close(), 'opened'),
      (error: Error) => `failed: ${error.message}`,
    );
    // Released only after the open began (it is waiting, or it already failed).
    await new Promise((r) => setTimeout(r, 300));
    holder.exec('COMMIT');
    holder.close();
    expect(await opening).toBe('opened');
  });

  it('a database path that is not a file is one clear line (exit 2), not an internal error', async () => {
    const dir = fresh();
    mkdirSync(path.join(dir, 'loopsign.db'));
    const error = await Store.open(dir).catch((e) => e);
    expect(error).toMatchObject({ code: 'store_unreadable', exitCode: 2 });
  });

  it('every record of a signature is in loopsign.db itself at once: a copy of that file alone, taken while the process still holds the database (as after a kill, before its -wal is checkpointed), has it', async () => {
    const dir = fresh();
    const store = await Store.open(dir);
    const op = await Operation.open(store, 'rate', 'rate-00000000000000000000000000000002', {
      chainId: 31337,
      wallet: account.address,
      data: { contentId: '8' },
    });
    // Steps and fields are checkpointed with the next write that is (docs/store.md): the signature's record is one.
    await op.setStep('planned');
    const hash = `0x${'cd'.repeat(32)}` as const;
    await op.write((db) => op.insertTx(db, { stage: 'rate:1', calls: [0], hash, raw: '0x01', nonce: 0, kind: 'call' }, [], Date.now()));
    // A backup or sync tool that copies loopsign.db alone, with the process alive (or killed) and its -wal beside it.
    const copy = fresh();
    writeFileSync(path.join(copy, 'loopsign.db'), readFileSync(path.join(dir, 'loopsign.db')));
    const restored = new Database(path.join(copy, 'loopsign.db'), { readonly: true });
    try {
      expect(restored.prepare('SELECT step FROM operations WHERE id = ?').get(op.id)).toEqual({ step: 'planned' });
      expect(restored.prepare('SELECT hash, status FROM transactions WHERE operation_id = ?').all(op.id)).toEqual([
        { hash, status: 'signed' },
      ]);
    } finally {
      restored.close();
      await op.close();
      store.close();
    }
  });

  it('a database a newer loopsign wrote is refused, not changed', async () => {
    const dir = fresh();
    const store = await Store.open(dir);
    store.db.pragma('user_version = 99');
    store.close();
    const error = await Store.open(dir).catch((e) => e);
    expect(error).toMatchObject({ code: 'store_too_new', exitCode: 2 });
  });
});

describe('records are parsed, not cast', () => {
  it('a row edited by hand is an error naming the operation (journal_corrupt), never a silent wrong value', async () => {
    const store = await Store.open(fresh());
    const op = await Operation.open(store, 'rate', 'rate-00000000000000000000000000000001', {
      chainId: 31337,
      wallet: account.address,
      data: { contentId: '7' },
    });
    await op.close();
    store.db.prepare("UPDATE operations SET data = json_set(data, '$.contentId', 'seven') WHERE id = ?").run(op.id);
    expect(() => readOperation(store, 'rate', op.id)).toThrow(/journal of operation rate-0+1 .*contentId/);
    store.close();
  });

  // A record set aside (another instance of the chain, --set-aside-stale) keeps the operationKey of the ask that
  // started afresh under the same id: `loopsign confirm --operation-key` must read the current one, not the old one
  // (whose transaction hashes the chain never saw).
  it('a lookup by operationKey reads the current record, not one set aside', async () => {
    const store = await Store.open(fresh());
    const key = `0x${'cd'.repeat(32)}`;
    const make = async (id: string) => {
      const op = await Operation.open(store, 'ask', id, {
        chainId: 31337,
        wallet: account.address,
        data: { clientRequestId: 'same', request: {} },
      });
      await op.save({}, { operationKey: key });
      await op.close();
    };
    await make('ask-00000000000000000000000000000001');
    store.db.prepare("UPDATE operations SET id = id || '~other-chain-1' WHERE id = 'ask-00000000000000000000000000000001'").run();
    await new Promise((r) => setTimeout(r, 5));
    await make('ask-00000000000000000000000000000001');
    expect(findByOperationKey(store, key)?.id).toBe('ask-00000000000000000000000000000001');
    store.close();
  });

  it('history counts what the windows count', async () => {
    const state = fresh();
    mkdirSync(path.join(state, 'journal'));
    const { _dir, ...j } = await legacyJournal(state);
    void _dir;
    writeFileSync(path.join(state, 'journal', `${j.id}.json`), JSON.stringify(j));
    const store = await Store.open(state);
    await importJournals(store, path.join(state, 'journal'), quietOut().out);
    const h = spendHistory(store, { chainId: 31337 });
    expect(h.rows).toMatchObject([{ chainId: 31337, asset: 'USDC', amount: '2200000', display: '2.2 USDC', operation: j.id, kind: 'ask' }]);
    expect(h.windows.find((w) => w.window === 'the last 24 hours')).toMatchObject({ amount: '2200000' });
    expect(readFileSync(store.file).length).toBeGreaterThan(0);
    store.close();
  });
});
