// Evidence verification:
// - an in-memory audit chain of 100,000 events on one thread (events per second, target ≥ 100,000/s);
// - a 100,000-event export file (~65 MB, within the whole-file cap) verified the single-thread way (read whole,
//   strict parse, verifyAuditExport — the reference) against the streamed path on worker threads, cold, in fresh
//   processes, interleaved (target ≥ 1.6x), with the CPU time of both (all threads) to show what the threads cost;
// - where streaming starts to pay: the same comparison on small exports around STREAM_MIN_BYTES;
// - a 1,000,000-event export (~650 MB) verified by the CLI in a child process: wall time and peak RSS (target
//   ≤ 300 MB; `npm run bench -- evidence --no-million` skips it).
// (The cold start of verifying a packet is in cold-start.mjs.)
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { auditEventDigest, verifyAuditExport, GENESIS_DIGEST } from '../build/evidence/audit.js';
import { STREAM_MIN_BYTES } from '../build/evidence/detect.js';
import { BIN, ROOT, median } from './lib.mjs';

function event(i, previous) {
  const e = {
    event_id: `evt_${i}`,
    workspace_id: 'ws_bench',
    sequence: i,
    previous_digest: previous,
    home_region: 'eu',
    actor_kind: 'agent',
    actor_reference: 'wallet:0xabc',
    assurance_method: 'wallet_signature',
    action: i % 3 ? 'ask.create' : 'ask.confirm',
    target_kind: 'ask',
    target_id: `op_${i}`,
    purpose: 'paid_feedback',
    reason: 'requested', // a string: verify-evidence refuses a null reason (docs/evidence.md, "Deliberate refusals")
    request_correlation: null,
    result: 'success',
    metadata_json: JSON.stringify({ amount: String(i), Asset: 'USDC', nested: { b: i, A: 'x' } }),
    occurred_at: new Date(1_700_000_000_000 + i * 1000).toISOString(),
  };
  e.event_digest = auditEventDigest(previous, e);
  return e;
}

function chain(n) {
  let previous = GENESIS_DIGEST;
  const events = new Array(n);
  for (let i = 1; i <= n; i++) previous = (events[i - 1] = event(i, previous)).event_digest;
  return { format: 'rateloop-audit-v1', integrity: { eventCount: n, headDigest: previous, valid: true }, events, workspaceId: 'ws_bench' };
}

/** Write an export of n events to a file, a piece at a time (a million events would not fit in a string). */
async function exportFile(file, n) {
  const out = createWriteStream(file);
  out.write('{"exportedAt":"2026-01-01T00:00:00.000Z","format":"rateloop-audit-v1","events":[');
  let previous = GENESIS_DIGEST;
  let piece = '';
  for (let i = 1; i <= n; i++) {
    const e = event(i, previous);
    previous = e.event_digest;
    piece += (i > 1 ? ',' : '') + JSON.stringify(e);
    if (piece.length > 1 << 20 || i === n) {
      if (!out.write(piece)) await new Promise((r) => out.once('drain', r));
      piece = '';
    }
  }
  out.end(`],"integrity":{"eventCount":${n},"headDigest":"${previous}","valid":true},"retention":{},"workspaceId":"ws_bench"}`);
  await new Promise((r) => out.on('finish', r));
  return file;
}

/**
 * Interleaved cold runs of both paths on one file, each in a fresh process as the CLI runs (bench/audit-verify.mjs;
 * in one process the single-thread path would run warm while every run's new workers start cold): medians of the
 * verification's wall time, pairwise ratios, and the CPU time of all threads.
 */
function compare(file, runs) {
  const wall = { whole: [], streamed: [] };
  const cpu = { whole: [], streamed: [] };
  for (let i = 0; i < runs; i++) {
    for (const how of ['whole', 'streamed']) {
      const r = spawnSync(process.execPath, [path.join(ROOT, 'bench', 'audit-verify.mjs'), how, file], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`audit-verify ${how} exited ${r.status}: ${r.stderr}`);
      const out = JSON.parse(r.stdout);
      if (!out.valid) throw new Error(`bench export did not verify (${how})`);
      wall[how].push(out.ms);
      cpu[how].push(out.cpu);
    }
  }
  const pairs = wall.whole.map((w, i) => w / wall.streamed[i]).sort((a, b) => a - b);
  return {
    whole: median(wall.whole),
    streamed: median(wall.streamed),
    cpuWhole: median(cpu.whole),
    cpuStreamed: median(cpu.streamed),
    pairs,
  };
}

/** Peak RSS (KiB) and wall time of the CLI verifying a file, from /usr/bin/time (or the child's own report). */
function cliPeak(file) {
  const args = [BIN, '--json', 'verify-evidence', '--audit', file];
  const t0 = process.hrtime.bigint();
  if (existsSync('/usr/bin/time')) {
    const r = spawnSync('/usr/bin/time', ['-f', 'maxrss=%M', process.execPath, ...args], { encoding: 'utf8', maxBuffer: 1 << 24 });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.status !== 0) throw new Error(`verify-evidence exited ${r.status}: ${r.stderr}`);
    return { ms, kib: Number(/maxrss=(\d+)/.exec(r.stderr)[1]), out: JSON.parse(r.stdout) };
  }
  const r = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `process.argv = [process.argv[0], ${JSON.stringify(BIN)}, ...${JSON.stringify(args.slice(1))}]; const { main } = await import(${JSON.stringify(path.join(ROOT, 'dist', 'cli.cjs'))}); await main(process.argv); process.stderr.write('maxrss=' + process.resourceUsage().maxRSS + '\\n');`,
    ],
    { encoding: 'utf8', maxBuffer: 1 << 24 },
  );
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  return { ms, kib: Number(/maxrss=(\d+)/.exec(r.stderr)[1]), out: JSON.parse(r.stdout) };
}

const fmtPairs = (pairs) => `pairwise ${pairs[0].toFixed(2)}–${pairs[pairs.length - 1].toFixed(2)}x`;

export async function run({ events = 100_000, runs = 5, million = !process.argv.includes('--no-million') } = {}) {
  const rows = [];
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
  rows.push({
    name: `audit chain: ${events.toLocaleString('en-US')} events in memory, one thread`,
    ms,
    value: `${rate.toLocaleString('en-US')}/s`,
    note: `target ≥ 100,000/s ${rate >= 100_000 ? 'met' : 'MISSED'}`,
  });

  const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-bench-ev-'));
  try {
    // The file comparison: the single-thread whole-file path as the baseline, the streamed path on workers.
    const file = await exportFile(path.join(dir, 'audit-100k.json'), events);
    const c = compare(file, runs);
    const speedup = c.whole / c.streamed;
    const mb = (statSync(file).size / 1e6).toFixed(0);
    rows.push({
      name: `audit file (${mb} MB): whole file, one thread (baseline)`,
      ms: c.whole,
      value: `${(c.whole / 1000).toFixed(2)} s`,
      note: `CPU ${(c.cpuWhole / 1000).toFixed(2)} s`,
    });
    rows.push({
      name: `audit file (${mb} MB): streamed, worker threads`,
      ms: c.streamed,
      value: `${(c.streamed / 1000).toFixed(2)} s`,
      note: `${speedup.toFixed(2)}x faster (${fmtPairs(c.pairs)}), target ≥ 1.6x ${speedup >= 1.6 ? 'met' : 'MISSED'}; CPU ${(c.cpuStreamed / 1000).toFixed(2)} s all threads`,
    });

    // Where streaming starts to pay: exports from well below to well above the threshold.
    for (const n of [3_000, 6_000, 13_000, 20_000, 30_000]) {
      const small = await exportFile(path.join(dir, `audit-${n}.json`), n);
      const s = compare(small, runs);
      const size = statSync(small).size;
      rows.push({
        name: `audit file of ${n.toLocaleString('en-US')} events (${(size / 2 ** 20).toFixed(1)} MiB)`,
        ms: s.streamed,
        value: `${(s.whole / s.streamed).toFixed(2)}x`,
        note: `streamed vs whole file (${s.whole.toFixed(0)} / ${s.streamed.toFixed(0)} ms); the CLI streams it: ${size >= STREAM_MIN_BYTES ? 'yes' : 'no'} (from ${STREAM_MIN_BYTES / 2 ** 20} MiB)`,
      });
      rmSync(small);
    }
    rmSync(file);

    if (million) {
      const big = await exportFile(path.join(dir, 'audit-1m.json'), 1_000_000);
      const peak = cliPeak(big);
      if (!peak.out.valid) throw new Error('the million-event export did not verify');
      const mib = peak.kib / 1024;
      rows.push({
        name: `audit file: 1,000,000 events (${(statSync(big).size / 1e6).toFixed(0)} MB), the CLI`,
        ms: peak.ms,
        value: `${mib.toFixed(0)} MiB`,
        note: `peak RSS, target ≤ 300 MB ${peak.kib * 1024 <= 300e6 ? 'met' : 'MISSED'}; ${(peak.ms / 1000).toFixed(1)} s`,
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
