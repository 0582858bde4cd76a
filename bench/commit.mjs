// Building one vote commit against tlock encryption alone (same network, same round), and a cold
// `loopsign rate commit --offline` against `node -e 0`.
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildCommitVoteParams } from '../build/vote/build.js';
import { tlockEncrypt } from '../build/vote/tlock.js';
import { votePlaintext } from '../build/vote/commit.js';
import { QUICKNET } from '../build/chains/table.js';
import { BIN, median, medianOfInterleaved } from './lib.mjs';

export async function run({ runs = 25 } = {}) {
  const now = Math.floor(Date.now() / 1000);
  const input = {
    voter: `0x${'22'.repeat(20)}`,
    contentId: 42n,
    isUp: true,
    predictedUpPercent: 69,
    stakeAmount: '2.5',
    epochDuration: 1200,
    roundId: 4n,
    roundReferenceRatingBps: 5000,
    runtime: {
      drandChainHash: QUICKNET.chainHash,
      drandGenesisTimeSeconds: QUICKNET.genesis,
      drandPeriodSeconds: 3,
      roundStartTimeSeconds: now,
    },
    now,
  };
  const plain = votePlaintext({ isUp: true, predictedUpBps: 6900, salt: `0x${'55'.repeat(32)}` });
  await buildCommitVoteParams(input, [QUICKNET]); // warm both paths
  await tlockEncrypt(QUICKNET, 1000, plain);
  const enc = [];
  const build = [];
  for (let i = 0; i < runs; i++) {
    let t0 = process.hrtime.bigint();
    await tlockEncrypt(QUICKNET, 28702148, plain);
    enc.push(Number(process.hrtime.bigint() - t0) / 1e6);
    t0 = process.hrtime.bigint();
    await buildCommitVoteParams(input, [QUICKNET]);
    build.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-bench-commit-'));
  const runtime = path.join(dir, 'runtime.json');
  writeFileSync(
    runtime,
    JSON.stringify({
      roundId: '4',
      roundReferenceRatingBps: '5000',
      epochDuration: '1200',
      drandChainHash: `0x${QUICKNET.chainHash}`,
      drandGenesisTimeSeconds: String(QUICKNET.genesis),
      drandPeriodSeconds: '3',
      roundStartTimeSeconds: String(now),
    }),
  );
  const env = { ...process.env, XDG_STATE_HOME: path.join(dir, 'state') };
  const node = process.execPath;
  const argv = [
    node,
    BIN,
    '--json',
    'rate',
    'commit',
    '--offline',
    '--runtime',
    runtime,
    '--voter',
    `0x${'22'.repeat(20)}`,
    '--content-id',
    '42',
    '--up',
    '--prediction',
    '69',
    '--stake',
    '2.5',
  ];
  process.env.XDG_STATE_HOME = env.XDG_STATE_HOME;
  const [base, cold] = medianOfInterleaved([[node, '-e', '0'], argv], 11);
  rmSync(dir, { recursive: true, force: true });
  const e = median(enc);
  return [
    { name: 'vote commit: tlock encryption alone (baseline)', ms: e, baseline: e },
    { name: 'vote commit: buildCommitVoteParams', ms: median(build), baseline: e, target: 1.5 },
    { name: 'cold `rate commit --offline` vs node -e 0', ms: cold, baseline: base },
  ];
}
