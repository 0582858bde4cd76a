// The spending policy's check at admission (issue 20): the windows over every operation on the chain, answered by
// one indexed query of the database, at 100, 1,000 and 10,000 recorded operations (three effects each, all inside
// the windows). Beside it, the file scan of earlier versions (one JSON journal per operation, every file read and
// parsed at every check), re-created here as it was, as the baseline.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { median } from './lib.mjs';

const root = mkdtempSync(path.join(tmpdir(), 'loopsign-bench-policy-'));
// The run's environment names the config folder holding the policy (loopsign reads none from the process's).
const env = {
  XDG_CONFIG_HOME: path.join(root, 'config'),
  XDG_DATA_HOME: path.join(root, 'data'),
  XDG_STATE_HOME: path.join(root, 'state'),
};
mkdirSync(path.join(root, 'config', 'loopsign'), { recursive: true });
writeFileSync(
  path.join(root, 'config', 'loopsign', 'policy.json'),
  JSON.stringify({
    version: 1,
    perAsk: { maxUsdc: '100000000' },
    rolling24h: { 31337: { maxUsdc: '1000000000000' } },
    calendarMonth: { 31337: { maxUsdc: '1000000000000' } },
  }),
);

const { Store } = await import('../build/store/db.js');
const { Operation } = await import('../build/store/operation.js');
const { PolicyGate } = await import('../build/policy/gate.js');
const { BUILTIN_CHAINS } = await import('../build/chains/table.js');
const { Output } = await import('../build/output.js');
const { loopsignPaths } = await import('../build/paths.js');
const { recomputeUsage } = await import('../build/store/usage.js');

const chain = BUILTIN_CHAINS[31337];
const hex = (n, width) => `0x${n.toString(16).padStart(width, '0')}`;
const ESCROW = hex(0xe5c, 40);

/** `count` ask operations, each with an approval, the pull that uses it, and an authorization, as the store records them. */
function fill(store, count) {
  const now = Date.now();
  store.db.exec('BEGIN');
  const op = store.db.prepare(
    'INSERT INTO operations (id, kind, chain_id, wallet, step, data, created_at, updated_at) VALUES (?, \'ask\', 31337, ?, \'done\', \'{"clientRequestId":"b","request":{}}\', ?, ?)',
  );
  const tx = store.db.prepare(
    "INSERT INTO transactions (hash, operation_id, seq, stage, calls, raw, nonce, kind, status, chain_id, wallet, signed_at) VALUES (?, ?, ?, 'ask', '[0]', '0x', ?, 'call', 'mined', 31337, ?, ?)",
  );
  const effect = store.db.prepare(
    "INSERT INTO effects (operation_id, tx_id, stage, chain_id, wallet, asset, kind, spender, amount, at, live) VALUES (?, ?, 'ask', 31337, ?, 'USDC', ?, ?, 1500000, ?, 1)",
  );
  for (let i = 0; i < count; i++) {
    const id = `ask-${hex(i, 32).slice(2)}`;
    const wallet = hex(i % 7, 40);
    const at = now - (i % 1000) * 60_000;
    op.run(id, wallet, at, at);
    for (let k = 0; k < 3; k++) {
      const t = tx.run(hex(i * 3 + k, 64), id, k, i * 3 + k, wallet, at);
      effect.run(id, t.lastInsertRowid, wallet, k === 0 ? 'approve' : 'pull', ESCROW, at);
    }
    recomputeUsage(store.db, id);
  }
  store.db.exec('COMMIT');
}

/** The earlier versions' check: every journal file of the folder read, parsed and summed, at every admission. */
function legacyJournals(dir, count) {
  mkdirSync(dir, { recursive: true });
  const now = new Date().toISOString();
  for (let i = 0; i < count; i++) {
    const txs = [0, 1, 2].map((k) => ({
      stage: 'ask',
      calls: [k],
      hash: hex(i * 3 + k, 64),
      raw: '0x',
      nonce: k,
      kind: 'call',
      status: 'mined',
      signedAt: now,
      effects: [{ asset: 'USDC', kind: k === 0 ? 'approve' : 'pull', spender: ESCROW, amount: '1500000' }],
    }));
    writeFileSync(
      path.join(dir, `ask-${hex(i, 32).slice(2)}.json`),
      JSON.stringify({
        version: 1,
        kind: 'ask',
        id: `ask-${i}`,
        chainId: 31337,
        wallet: hex(i % 7, 40),
        createdAt: now,
        updatedAt: now,
        step: 'done',
        txs,
      }),
    );
  }
}

function legacyScan(dir, since) {
  let used = 0n;
  for (const name of readdirSync(dir)) {
    const j = JSON.parse(readFileSync(path.join(dir, name), 'utf8'));
    if (j.chainId !== 31337) continue;
    const by = new Map();
    for (const t of j.txs) {
      if (new Date(t.signedAt) < since) continue;
      for (const e of t.effects) {
        const s = by.get(e.spender) ?? { allowed: 0n, pulled: 0n };
        if (e.kind === 'pull') s.pulled += BigInt(e.amount);
        else s.allowed += BigInt(e.amount);
        by.set(e.spender, s);
      }
    }
    for (const s of by.values()) used += s.allowed > s.pulled ? s.allowed : s.pulled;
  }
  return used;
}

const timeIt = (fn, runs) => {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(samples);
};

export async function run({ sizes = [100, 1000, 10_000] } = {}) {
  const out = new Output({ json: true, quiet: true, debug: false }, { stdout: { write: () => true }, stderr: { write: () => true } });
  const rows = [];
  for (const count of sizes) {
    const dir = path.join(root, `state-${count}`);
    const store = await Store.open(dir);
    fill(store, count);
    const gate = await PolicyGate.load(out, { flag: undefined, env, paths: loopsignPaths(env) }, async () => store);
    if (gate.policies.length === 0) throw new Error('bench: the policy file was not loaded');
    const op = await Operation.open(store, 'ask', `ask-${'f'.repeat(32)}`, {
      chainId: 31337,
      wallet: hex(99, 40),
      data: { clientRequestId: 'x', request: {} },
    });
    const effects = [{ asset: 'USDC', kind: 'pull', spender: ESCROW, amount: 1_000_000n }];
    // The whole admission check, inside a write transaction as the ledger makes it.
    const check = async () => store.write((db) => gate.admit(db, chain, op, 'ask', effects));
    for (let i = 0; i < 5; i++) await check();
    const samples = [];
    for (let i = 0; i < 51; i++) {
      const t0 = process.hrtime.bigint();
      await check();
      samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const db = median(samples);
    // Not vacuous: the windows see every operation.
    const { windowUsage } = await import('../build/policy/usage.js');
    if (windowUsage(store.db, 31337, new Date(0)).USDC !== BigInt(count) * 3_000_000n)
      throw new Error('the bench database does not hold what it should');
    await op.close();
    store.close();
    const legacy = path.join(root, `journal-${count}`);
    legacyJournals(legacy, count);
    const since = new Date(Date.now() - 86_400_000);
    const scan = timeIt(() => legacyScan(legacy, since), count >= 10_000 ? 5 : 21);
    rows.push({
      name: `policy check, ${count} operations (database)`,
      ms: db,
      baseline: scan,
      note: `file scan ${scan.toFixed(1)} ms; target ≤ 5 ms`,
    });
  }
  rmSync(root, { recursive: true, force: true });
  return rows;
}
