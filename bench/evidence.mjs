// Evidence verification: a generated audit chain of 100,000 events (events per second, target ≥ 100,000/s), and
// the cold start of verifying the shared example packet against `node -e 0` plus the same hashing work.
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { auditEventDigest, verifyAuditExport, GENESIS_DIGEST } from '../dist/evidence/audit.js';
import { BIN, ROOT, medianOfInterleaved, median } from './lib.mjs';

function chain(n) {
  let previous = GENESIS_DIGEST;
  const events = new Array(n);
  for (let i = 1; i <= n; i++) {
    const e = {
      event_id: `evt_${i}`, workspace_id: 'ws_bench', sequence: i, previous_digest: previous, home_region: 'eu', actor_kind: 'agent', actor_reference: 'wallet:0xabc',
      assurance_method: 'wallet_signature', action: i % 3 ? 'ask.create' : 'ask.confirm', target_kind: 'ask', target_id: `op_${i}`, purpose: 'paid_feedback', reason: null,
      request_correlation: null, result: 'success', metadata_json: JSON.stringify({ amount: String(i), Asset: 'USDC', nested: { b: i, A: 'x' } }), occurred_at: new Date(1_700_000_000_000 + i * 1000).toISOString(),
    };
    e.event_digest = auditEventDigest(previous, e);
    previous = e.event_digest;
    events[i - 1] = e;
  }
  return { format: 'rateloop-audit-v1', integrity: { eventCount: n, headDigest: previous, valid: true }, events, workspaceId: 'ws_bench' };
}

export async function run({ events = 100_000, runs = 5 } = {}) {
  const doc = chain(events);
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    const r = verifyAuditExport(doc);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (!r.valid) throw new Error('bench chain did not verify');
  }
  const ms = median(times);
  const rate = Math.round(events / (ms / 1000));

  // Cold start: the whole CLI verifying the example packet, against node -e 0 doing the same hashing work.
  const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-bench-ev-'));
  const work = path.join(dir, 'work.mjs');
  const packet = path.join(ROOT, 'test', 'fixtures', 'vectors', 'synthetic-evidence-v4.json');
  const pin = path.join(ROOT, 'test', 'fixtures', 'vectors', 'synthetic-evidence-v4.spki.txt');
  writeFileSync(work, `import { createHash } from 'node:crypto'; import { readFileSync } from 'node:fs';
const t = readFileSync(${JSON.stringify(packet)}, 'utf8'); const p = JSON.parse(t);
for (let i = 0; i < 12; i++) createHash('sha256').update(JSON.stringify(p.payload)).digest('hex');`);
  const node = process.execPath;
  const [base, hashing, verify] = medianOfInterleaved(
    [[node, '-e', '0'], [node, work], [node, BIN, 'verify-evidence', packet, '--public-key', pin, '--key-id', 'ed25519:2d5798c16bafaed29bdbcca0']],
    15,
  );
  rmSync(dir, { recursive: true, force: true });
  void readFileSync;
  return [
    { name: `audit chain: ${events.toLocaleString('en-US')} events verified`, ms, value: `${rate.toLocaleString('en-US')}/s`, note: `target ≥ 100,000/s ${rate >= 100_000 ? 'met' : 'MISSED'}` },
    { name: 'cold verify: node -e 0 + the hashing work (baseline)', ms: hashing, baseline: hashing, note: `node -e 0 alone ${base.toFixed(1)} ms` },
    { name: 'cold verify: loopsign verify-evidence example packet', ms: verify, baseline: hashing, target: 2 },
  ];
}
