// One ask with a USDC feedback bonus, ordered (5 transactions) against --atomic (EIP-7702 batches, 3), on a fresh
// sandbox that mines a block per transaction at once, and on one that mines a block every 2 s as Base does
// (`sandbox --block-time 2`). Runs alternate between the two modes after one --atomic run that delegates the
// wallet (reported apart). Each run's phases come from LOOPSIGN_TIMINGS (src/timings.ts): unlocking the keystore,
// service calls, signing, waiting for blocks, the reservation's minimum age, confirmation; concurrent phases each
// count in full. Targets: --atomic ≤ 1.4 s with instant blocks; ≤ 0.65x ordered with 2-second blocks.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BIN, median, startSandbox } from './lib.mjs';

const PHASES = ['unlock', 'service', 'signing', 'blocks', 'reservation age', 'confirmation', 'checkpoint'];
const sleepSync = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function askOnce(home, env, mode, tag) {
  // A random pause first: back-to-back runs otherwise fall into step with the chain's second, which decides how
  // long the reservation's minimum age makes an ask wait (from 0 to 1 s; half a second for a user on average).
  sleepSync(Math.random() * 1000);
  const file = path.join(home, `${tag}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      chainId: 31337,
      clientRequestId: `bench-${tag}-${Date.now()}`,
      maxPaymentAmount: '2500000',
      bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
      feedbackBonus: { amount: '1000000', asset: 'USDC' },
      question: { title: `Bench ${tag}`, contextUrl: 'https://example.com/bench', categoryId: '1', tags: ['bench'] },
    }),
  );
  const t0 = process.hrtime.bigint();
  const r = spawnSync(
    process.execPath,
    [BIN, '--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', ...(mode === 'atomic' ? ['--atomic'] : [])],
    { env: { ...env, LOOPSIGN_TIMINGS: '1' }, encoding: 'utf8' },
  );
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`ask (${mode}) failed: ${r.stdout}${r.stderr}`);
  // The transactions the ask and its bonus sent, as the command reports them (the journal file this read before
  // issue 20 is a database now).
  const out = JSON.parse(r.stdout);
  const sent = out.transactionHashes.length + (out.feedbackBonus?.transactionHashes?.length ?? 0);
  const timings = r.stderr
    .split('\n')
    .filter((l) => l.includes('"event":"timings"'))
    .map((l) => JSON.parse(l))[0];
  return { ms, txs: sent, phases: timings?.phases ?? {} };
}

/** Median of each phase over runs, as "unlock 310 ms, service 95 ms (4), …". */
function breakdown(runs) {
  return PHASES.map((p) => {
    const ms = median(runs.map((r) => r.phases[p]?.ms ?? 0));
    const count = median(runs.map((r) => r.phases[p]?.count ?? 0));
    return `${p} ${ms.toFixed(0)} ms${count > 1 ? ` (${count})` : ''}`;
  }).join(', ');
}

async function onChain(label, sandboxArgs, runs) {
  const home = mkdtempSync(path.join(tmpdir(), 'loopsign-bench-ask-'));
  const sb = await startSandbox(path.join(home, 'sb'), sandboxArgs);
  try {
    await fetch(`${sb.info.baseUrl}/__sandbox/settings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ raters: false, rateLimits: { write: 10000, read: 10000 } }),
    });
    const env = sb.env(home);
    // The first --atomic run also delegates the wallet (EIP-7702); a delegated wallet sends ordered plans as before.
    const first = askOnce(home, env, 'atomic', `${label}-first`);
    const ordered = [];
    const atomic = [];
    for (let i = 0; i < runs; i++) {
      ordered.push(askOnce(home, env, 'ordered', `${label}-o${i}`));
      atomic.push(askOnce(home, env, 'atomic', `${label}-a${i}`));
    }
    return { first, ordered, atomic };
  } finally {
    await sb.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

const spread = (xs) => `${(Math.min(...xs) / 1000).toFixed(2)}–${(Math.max(...xs) / 1000).toFixed(2)} s`;

export async function run({ runs = 11, slowRuns = 3 } = {}) {
  const rows = [];
  for (const [label, args, n] of [
    ['instant blocks', [], runs],
    ['2 s blocks', ['--block-time', '2'], slowRuns],
  ]) {
    const { first, ordered, atomic } = await onChain(label.replace(/ /g, '-'), args, n);
    const o = median(ordered.map((x) => x.ms));
    const a = median(atomic.map((x) => x.ms));
    const instant = args.length === 0;
    rows.push({
      name: `ask + USDC bonus, ${label}, ordered (baseline)`,
      ms: o,
      baseline: o,
      note: `${ordered[0].txs} transactions; ${n} runs ${spread(ordered.map((x) => x.ms))}`,
    });
    rows.push({
      name: `ask + USDC bonus, ${label}, --atomic`,
      ms: a,
      baseline: o,
      ...(instant
        ? {
            note: `${atomic[0].txs} transactions; ${n} runs ${spread(atomic.map((x) => x.ms))}; target ≤ 1.4 s ${a <= 1400 ? 'met' : 'MISSED'}`,
          }
        : { target: 0.65 }),
    });
    rows.push({
      name: `  first --atomic run (delegates the wallet)`,
      ms: first.ms,
      value: `${(first.ms / 1000).toFixed(2)} s`,
      note: `${first.txs} transactions`,
    });
    rows.push({ name: `  phases, ordered`, ms: o, value: '', note: breakdown(ordered) });
    rows.push({ name: `  phases, --atomic`, ms: a, value: '', note: breakdown(atomic) });
  }
  return rows;
}
