// One ask with a USDC feedback bonus on a fresh sandbox: ordered execution against --atomic (EIP-7702 batches).
// Reports wall time of the whole `loopsign ask` and the number of transactions each cost.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BIN, startSandbox } from './lib.mjs';


function askOnce(home, env, mode, tag) {
  const file = path.join(home, `${tag}.json`);
  writeFileSync(file, JSON.stringify({
    chainId: 31337,
    clientRequestId: `bench-${tag}-${Date.now()}`,
    maxPaymentAmount: '2500000',
    bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
    feedbackBonus: { amount: '1000000', asset: 'USDC' },
    question: { title: `Bench ${tag}`, contextUrl: 'https://example.com/bench', categoryId: '1', tags: ['bench'] },
  }));
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [BIN, '--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', ...(mode === 'atomic' ? ['--atomic'] : [])], { env, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`ask (${mode}) failed: ${r.stdout}${r.stderr}`);
  const journal = JSON.parse(readFileSync(JSON.parse(r.stdout).journal, 'utf8'));
  return { ms, txs: journal.txs.filter((t) => t.status === 'mined').length };
}

export async function run({ runs = 3 } = {}) {
  const home = mkdtempSync(path.join(tmpdir(), 'loopsign-bench-ask-'));
  const sb = await startSandbox(path.join(home, 'sb'));
  const info = sb.info;
  try {
    await fetch(`${info.baseUrl}/__sandbox/settings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ raters: false, rateLimits: { write: 10000, read: 10000 } }) });
    const env = {
      ...process.env,
      XDG_STATE_HOME: path.join(home, 'state'),
      LOOPSIGN_CHAIN_ID: '31337',
      LOOPSIGN_SANDBOX_MANIFEST: info.manifest,
      LOOPSIGN_KEYSTORE: info.devWallet.keystore,
      LOOPSIGN_PASSWORD_FILE: info.devWallet.passwordFile,
    };
    const ordered = [];
    const atomic = [];
    // Ordered first: the atomic runs delegate the wallet (a delegated wallet still sends ordered plans fine).
    for (let i = 0; i < runs; i++) ordered.push(askOnce(home, env, 'ordered', `o${i}`));
    for (let i = 0; i < runs; i++) atomic.push(askOnce(home, env, 'atomic', `a${i}`));
    const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const o = med(ordered.map((x) => x.ms));
    const a = med(atomic.map((x) => x.ms));
    return [
      { name: 'ask with USDC bonus, ordered (baseline)', ms: o, baseline: o, note: `${ordered[0].txs} transactions` },
      { name: 'ask with USDC bonus, --atomic (EIP-7702)', ms: a, baseline: o, note: `${atomic[0].txs} transactions (first run includes the delegation)` },
    ];
  } finally {
    await sb.stop();
    rmSync(home, { recursive: true, force: true });
  }
}
