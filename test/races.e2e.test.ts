// Several loopsign processes at once against one database (issue 20, the attack's reproductions):
// 1. An ask with a feedback bonus is killed (SIGKILL) at each step of the bonus path, then several identical reruns
//    are started together — their first requests to the node held and released at once, so they reach the store
//    in the same instant. Whatever the interleaving: one submission, one bonus pool, exactly the bounty and the bonus
//    paid, every transaction recorded. (The lock files of earlier versions let two reruns both take over a dead
//    run's lock: 3 USDC left the wallet for a 2.5 USDC ask in 1 of 8 trials.)
// 2. Two wallets ask at once under one 24-hour window that fits only one of them, through a slow node: the window is
//    never crossed and nothing beyond it is signed. (Earlier, admission and record were separated by an RPC round
//    trip, and both paid.)
// 3. Two votes from one wallet whose allowance covers one stake (found by the store property test): the service plans
//    a vote without its approval when the allowance already covers the stake, and the other vote may spend that
//    allowance first. A rerun of the vote whose commit then cannot pass plans again (nothing of it was sent) instead of
//    reusing the journaled plan, which would fail the same way until the commit's drand round lapsed.
// 4. One transaction journaled by two operations (helper-31's red team): a vote or an ask's bonus stage stopped after
//    signing its approval, and another operation that signs the same approval with the same nonce, gas and fees: the
//    same bytes. The bytes are the second operation's; the first's rerun approves again instead of taking the other's
//    approval for its own and failing for ever (approval_replaced).
// LOOPSIGN_RACE_TRIALS=N repeats each case N times (CI runs each once).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { makeHome, runCli, startCli, TEST_ADDRESS, TEST_PRIVATE_KEY, type Home, type RunResult } from './helpers/cli.js';
import { bonusPoolsFunded, openSession, submissionsTitled, tokenBalance, type Session } from './helpers/chain.js';
import { startRpcProxy } from './helpers/rpc-proxy.js';
import { recorded, storeFile, withStore } from './helpers/store.js';
import { capture } from './helpers/capture.js';
import { createPublicClient, createWalletClient, http, parseAbi, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decryptKeystore } from '../src/wallet/keystore.js';

const TRIALS = Math.max(1, Number(process.env.LOOPSIGN_RACE_TRIALS ?? 1));
const RERUNS = 4;
const BONUS_POINTS = [
  'ask:confirmed',
  'bonus:planned',
  'bonus:signed:0',
  'bonus:mined:0',
  'bonus:signed:1',
  'bonus:mined:1',
  'bonus:executed',
];

let s: Session;
let n = 0;

beforeAll(async () => {
  s = await openSession({ rateLimits: { write: 10_000, read: 10_000 }, raters: false });
});
afterAll(async () => {
  await s.sb.stop();
});

const usdc = () => tokenBalance(s, 'USDC');

function askFile(home: Home, title: string, amounts: { bounty: string; bonus?: string; max: string }): string {
  n++;
  return home.file(
    `race-${n}.json`,
    JSON.stringify({
      chainId: 31337,
      clientRequestId: `race-${process.pid}-${n}-${Date.now()}`,
      maxPaymentAmount: amounts.max,
      bounty: { amount: amounts.bounty, asset: 'USDC', requiredVoters: '3' },
      ...(amounts.bonus ? { feedbackBonus: { amount: amounts.bonus, asset: 'USDC' } } : {}),
      question: { title, contextUrl: `https://example.com/race/${process.pid}-${n}-${Date.now()}`, categoryId: '1', tags: ['race'] },
    }),
  );
}

/**
 * Each transaction hash journaled by more than one operation since `known` was taken, with the statuses its records
 * have (e.g. 'dropped,mined'). `sharedSince()` with no argument gives the hashes to pass later.
 */
function sharedSince(known: Set<string> = new Set()): { hashes: Set<string>; statuses: string[] } {
  const rows = !existsSync(storeFile(s.home))
    ? []
    : withStore(
        s.home,
        (db) =>
          db
            .prepare(
              `SELECT hash, GROUP_CONCAT(status, ',') AS statuses FROM (SELECT hash, status FROM transactions ORDER BY status)
               GROUP BY hash HAVING COUNT(*) > 1`,
            )
            .all() as { hash: string; statuses: string }[],
      );
  const fresh = rows.filter((r) => !known.has(r.hash));
  return { hashes: new Set(rows.map((r) => r.hash)), statuses: fresh.map((r) => r.statuses) };
}

/** Mines `count` empty blocks: the sandbox's finalized block (two behind its head) passes what came before. */
async function mineBlocks(count = 2): Promise<void> {
  for (let i = 0; i < count; i++) await s.pub.request({ method: 'evm_mine' as never, params: [] as never });
}

/** The statuses of the cancels loopsign signed for slots another run left open (slot_versions). */
function cancels(): string[] {
  return withStore(s.home, (db) =>
    (db.prepare("SELECT status FROM slot_versions WHERE kind = 'cancel'").all() as { status: string }[]).map((r) => r.status),
  );
}

/** Starts `count` identical runs whose first node requests are held until all have one, then released together. */
async function together(count: number, args: string[], home: Home, env: Record<string, string>, delayMs = 0): Promise<RunResult[]> {
  const proxy = await startRpcProxy(s.sb.info.rpcUrl, { delayMs });
  proxy.gate(count);
  try {
    return await Promise.all(Array.from({ length: count }, () => runCli([...args, '--rpc-url', proxy.url], home, { env })));
  } finally {
    await proxy.close();
  }
}

describe('a killed ask with a bonus, rerun by several processes at once', () => {
  const cases = BONUS_POINTS.flatMap((point) => Array.from({ length: TRIALS }, (_, trial) => [point, trial] as const));
  it.each(cases)('killed after %s (trial %i): one submission, one bonus, exactly bounty + bonus paid', async (point) => {
    const home = s.home;
    const title = `Race ${point} ${n}`;
    const file = askFile(home, title, { bounty: '1500000', bonus: '1000000', max: '2500000' });
    const args = ['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'];
    const before = await usdc();
    const killed = await runCli(args, home, { env: { ...s.sb.env(), LOOPSIGN_CRASH_AFTER: point } });
    expect(killed.code, `${point}: the first run must be killed, got ${killed.code}\n${killed.stderr}`).toBe(-1);

    const runs = await together(RERUNS, args, home, s.sb.env());
    for (const r of runs) {
      if (r.code === 0) continue;
      // The only other answer: another process is working on this operation (exit 9, busy), nothing sent.
      expect(r.code, r.stdout + r.stderr).toBe(9);
      expect(r.json().error.code).toBe('journal_locked');
    }
    expect(
      runs.some((r) => r.code === 0),
      runs.map((r) => r.stdout + r.stderr).join('\n'),
    ).toBe(true);
    const done = runs.find((r) => r.code === 0)!.json();
    expect(done.feedbackBonus.status).toBe('funded');

    expect(await submissionsTitled(s, title), 'one submission').toBe(1);
    expect(await bonusPoolsFunded(s, done.contentIds[0]), 'one bonus pool').toBe(1);
    expect(before - (await usdc()), 'exactly the bounty and the bonus left the wallet').toBe(2_500_000n);
    // Every transaction that moved money is in the database, mined, under this one operation.
    const op = recorded(home, done.operation);
    expect(
      op.txs.every((t) => t.status === 'mined'),
      JSON.stringify(op.txs),
    ).toBe(true);
    expect(op.txs.filter((t) => t.stage === 'bonus').length).toBeGreaterThan(0);
    const pulled = withStore(
      home,
      (db) =>
        db
          .prepare("SELECT COALESCE(SUM(amount), 0) AS p FROM effects WHERE operation_id = ? AND live = 1 AND kind = 'pull'")
          .get(done.operation) as { p: number },
    );
    expect(pulled.p).toBe(2_500_000);
    capture.count('race trials: killed ask rerun by 4 processes at once', `${point}`);
  });
});

describe('two asks with one bonus amount from one wallet', () => {
  it("one killed after signing its bonus approval, the other's rerun cancels that gap, and the first one's rerun approves again once that is final", async () => {
    // An ask's own stage starts with its reservation (bytes of its own question), but the bonus stage starts with an
    // approval of the bonus to the escrow. Ask D is killed once its bonus is planned, ask A after signing its bonus
    // approval (never sent). Before nonce slots, D's rerun signed that approval with the same nonce, gas and fees: one
    // transaction for two asks, which A's rerun took for its own, then found the allowance spent by D's pool
    // (approval_replaced). Now D fills A's gap with a cancel (a version of A's slot: only one can be mined) and signs
    // past it; A's rerun finds its slot taken by the cancel and signs its bonus anew once that is final.
    const amounts = { bounty: '1500000', bonus: '1000000', max: '2500000' };
    const [fileD, fileA] = [`Twin D ${n}`, `Twin A ${n}`].map((t) => askFile(s.home, t, amounts)) as [string, string];
    const args = (file: string) => ['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'];
    const killedAt = (file: string, point: string) => runCli(args(file), s.home, { env: { ...s.sb.env(), LOOPSIGN_CRASH_AFTER: point } });
    const shared = sharedSince().hashes;
    const before = await usdc();
    for (const [file, point] of [
      [fileD, 'bonus:planned'],
      [fileA, 'bonus:signed:0'],
    ] as const) {
      const killed = await killedAt(file, point);
      expect(killed.code, point + killed.stdout + killed.stderr).toBe(-1);
    }
    const cancelsBefore = cancels().length;
    const d = await runCli(args(fileD), s.home, { env: s.sb.env() });
    expect(d.code, d.stdout + d.stderr).toBe(0);
    expect(d.stderr).toMatch(/"event":"tx\.cancel"/);
    expect(cancels().slice(cancelsBefore)).toEqual(['signed']);
    await mineBlocks();
    const a = await runCli(args(fileA), s.home, { env: s.sb.env() });
    expect(a.code, a.stdout + a.stderr).toBe(0);
    expect(a.stderr).toMatch(/"event":"tx\.void"/);
    for (const r of [d, a]) expect(r.json().feedbackBonus.status).toBe('funded');
    expect(before - (await usdc()), 'two bounties and two bonuses, each once').toBe(5_000_000n);
    expect(sharedSince(shared).statuses, 'no transaction journaled by two operations').toEqual([]);
    expect(cancels().slice(cancelsBefore)).toEqual(['mined']);
  });
});

describe('two wallets under one window, through a slow node', () => {
  const erc20 = parseAbi(['function balanceOf(address) view returns (uint256)']);
  it.each(Array.from({ length: TRIALS * 2 }, (_, i) => i))(
    'trial %i: one pays, the other is refused, the window is never crossed',
    async () => {
      const home = makeHome();
      mkdirSync(path.join(home.env.XDG_CONFIG_HOME, 'loopsign'), { recursive: true });
      writeFileSync(
        path.join(home.env.XDG_CONFIG_HOME, 'loopsign', 'policy.json'),
        JSON.stringify({ version: 1, rolling24h: { '31337': { maxUsdc: '3000000' } } }),
      );
      await s.sb.control('/__sandbox/fund', { address: TEST_ADDRESS, usdc: '10000000', eth: '10' });
      const pub = createPublicClient({ transport: http(s.sb.info.rpcUrl) });
      const balanceOf = (a: `0x${string}`) =>
        pub.readContract({ address: s.sb.info.tokens.USDC.address, abi: erc20, functionName: 'balanceOf', args: [a] });
      const wallets = [s.sb.info.devWallet.address, TEST_ADDRESS as `0x${string}`];
      const before = await Promise.all(wallets.map(balanceOf));

      const proxy = await startRpcProxy(s.sb.info.rpcUrl, { delayMs: 150 });
      proxy.gate(2);
      const amounts = { bounty: '2000000', max: '2000000' };
      const [a, b] = await Promise.all([
        runCli(
          ['--json', 'ask', '--file', askFile(home, `Window A ${n}`, amounts), '--payment-mode', 'wallet_calls', '--rpc-url', proxy.url],
          home,
          { env: s.sb.env() },
        ),
        runCli(
          ['--json', 'ask', '--file', askFile(home, `Window B ${n}`, amounts), '--payment-mode', 'wallet_calls', '--rpc-url', proxy.url],
          home,
          {
            env: { ...s.sb.env(), LOOPSIGN_KEYSTORE: undefined, LOOPSIGN_PASSWORD_FILE: undefined, LOOPSIGN_PRIVATE_KEY: TEST_PRIVATE_KEY },
          },
        ),
      ]);
      await proxy.close();
      const codes = [a.code, b.code].sort();
      expect(codes, a.stdout + a.stderr + b.stdout + b.stderr).toEqual([0, 5]);
      const refused = [a, b].find((r) => r.code === 5)!;
      expect(refused.json().error.code).toBe('policy_limit');
      const after = await Promise.all(wallets.map(balanceOf));
      const spent = before[0]! - after[0]! + (before[1]! - after[1]!);
      expect(spent, 'what left both wallets').toBe(2_000_000n);
      // Nothing beyond the window was even signed: the refused run recorded no effect.
      const signed = withStore(
        home,
        (db) => db.prepare("SELECT COALESCE(SUM(amount), 0) AS s FROM effects WHERE live = 1 AND kind = 'pull'").get() as { s: number },
      );
      expect(signed.s).toBeLessThanOrEqual(3_000_000);
      const shown = await runCli(['--json', 'history'], home, { env: s.sb.env() });
      expect(shown.json().windows.find((w: { window: string }) => w.window === 'the last 24 hours').amount).toBe('2000000');
      capture.count('race trials: two wallets under one window', 'slow node');
    },
  );
});

describe('two votes from one wallet, one allowance', () => {
  // The dev wallet's allowance to the voting engine: one stake unless told otherwise.
  const allowOneStake = async (amount = 1_000_000n) => {
    const password = readFileSync(s.sb.info.devWallet.passwordFile, 'utf8').replace(/\n$/, '');
    const { privateKey } = await decryptKeystore(JSON.parse(readFileSync(s.sb.info.devWallet.keystore, 'utf8')), password);
    const dev = createWalletClient({ account: privateKeyToAccount(toHex(privateKey)), transport: http(s.sb.info.rpcUrl) });
    const approve = parseAbi(['function approve(address,uint256) returns (bool)']);
    await s.pub.waitForTransactionReceipt({
      hash: await dev.writeContract({
        chain: null,
        address: s.sb.info.tokens.LREP.address,
        abi: approve,
        functionName: 'approve',
        args: [s.sb.info.contracts.roundVotingEngine, amount],
      }),
    });
  };
  const voteArgs = async () => [
    '--json',
    'rate',
    '--content-id',
    String((await s.sb.control('/__sandbox/content', {})).contentId),
    '--up',
    '--prediction',
    '60',
    '--stake',
    '1',
  ];

  it.each(Array.from({ length: TRIALS }, (_, i) => i))(
    'trial %i: started together through a slow node, both are cast at once, each stake paid once',
    async () => {
      await allowOneStake();
      const before = await tokenBalance(s, 'LREP');
      const proxy = await startRpcProxy(s.sb.info.rpcUrl, { delayMs: 150 });
      proxy.gate(2);
      const runs = await Promise.all(
        [await voteArgs(), await voteArgs()].map((args) => runCli([...args, '--rpc-url', proxy.url], s.home, { env: s.sb.env() })),
      );
      await proxy.close();
      for (const r of runs) expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(before - (await tokenBalance(s, 'LREP'))).toBe(2_000_000n);
      capture.count('race trials: two votes from one wallet, one allowance', 'slow node');
    },
  );

  // With an allowance of exactly one stake: a vote killed at `crash`, another vote of the wallet run to the end (it
  // spends that allowance), then the first vote's rerun. Both must be cast, each stake paid once.
  const killedThenOther = async (crash: string, final = false) => {
    await allowOneStake();
    const vote = async (crashAfter?: string) => {
      const args = await voteArgs();
      const env = { ...s.sb.env(), ...(crashAfter ? { LOOPSIGN_CRASH_AFTER: crashAfter } : {}) };
      return { args, first: await runCli(args, s.home, { env }) };
    };
    const before = await tokenBalance(s, 'LREP');
    const a = await vote(crash);
    expect(a.first.code, a.first.stdout + a.first.stderr).toBe(-1);
    const b = await vote();
    expect(b.first.code, b.first.stdout + b.first.stderr).toBe(0);
    // The other vote cancelled the first one's open slot: its calls move to a new nonce once that cancel is final.
    if (final) await mineBlocks();
    const rerun = await runCli(a.args, s.home, { env: s.sb.env() });
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    expect(before - (await tokenBalance(s, 'LREP')), 'two stakes, each once').toBe(2_000_000n);
    return rerun;
  };

  // No allowance (each vote's plan approves its stake, then commits), and two fresh questions, both made before either
  // vote: no block comes between the votes' signatures, so their approvals (same amount, nonce, gas and fees) are the
  // same bytes.
  const twoVotesNoAllowance = async () => {
    await allowOneStake(0n);
    const [argsA, argsB] = [await voteArgs(), await voteArgs()];
    return { argsA, argsB, shared: sharedSince().hashes, before: await tokenBalance(s, 'LREP') };
  };
  const killedAfterApproval = async (args: string[]) => {
    const killed = await runCli(args, s.home, { env: { ...s.sb.env(), LOOPSIGN_CRASH_AFTER: 'rate:1:signed:0' } });
    expect(killed.code, killed.stdout + killed.stderr).toBe(-1);
  };

  it('the vote whose journaled plan counted on an allowance the other spent plans again on its rerun, and both are cast once', async () => {
    // The first vote is planned (commit only: the allowance covers it) and killed before it signs anything.
    await killedThenOther('rate:planned');
  });

  it('the vote whose signed commit lost its nonce to the other vote, which spent the allowance it counted on, plans again on its rerun', async () => {
    // The first vote is killed after signing its commit (never broadcast): the second takes that commit's nonce and
    // spends the allowance. The rerun finds the signed commit dropped, so nothing of its journaled plan can still be
    // mined, and that plan's premise (no approval needed) is gone: it plans again, approval included. It reported
    // `call_would_revert` (exit 4) here on every rerun (store-property.e2e found it, seed -1981136241, two full runs
    // at once).
    const rerun = await killedThenOther('rate:1:signed:0', true);
    expect(rerun.stderr).toMatch(/"event":"tx\.void"/);
  });

  it('a vote whose mined approval the other vote spent (planned without an approval, the allowance covering it) stops with approval_replaced, a hint for a vote, and never approves its stake twice', async () => {
    // By design (docs/security.md): one operation never approves its stake twice, so this vote cannot be cast from
    // its journal. Nothing beyond the other vote's stake leaves the wallet, on any rerun.
    const { argsA, argsB, before } = await twoVotesNoAllowance();
    const a = await runCli(argsA, s.home, { env: { ...s.sb.env(), LOOPSIGN_CRASH_AFTER: 'rate:1:signed:1' } });
    expect(a.code, a.stdout + a.stderr).toBe(-1);
    const b = await runCli(argsB, s.home, { env: s.sb.env() });
    expect(b.code, b.stdout + b.stderr).toBe(0);
    await mineBlocks();
    for (const attempt of [1, 2]) {
      const rerun = await runCli(argsA, s.home, { env: s.sb.env() });
      expect(rerun.code, rerun.stdout + rerun.stderr).toBe(4);
      const error = rerun.json().error;
      expect(error.code).toBe('approval_replaced');
      expect(error.hint).toMatch(/this vote paid nothing beyond its approval/);
      expect(error.hint).not.toMatch(/clientRequestId/);
      expect(before - (await tokenBalance(s, 'LREP')), `rerun ${attempt}: the other vote's stake only`).toBe(1_000_000n);
    }
  });

  it('a vote killed after signing its approval: another vote cancels that gap, signs past it, and the rerun approves again', async () => {
    // No allowance: each vote's plan approves its stake, then commits. Both questions exist before the first vote, so
    // no block comes between the two signatures: before nonce slots, the second vote signed the same approval with the
    // same nonce, gas and fees, one transaction for two votes (helper-31's red team). Now it fills the first vote's gap
    // with a cancel and signs past it; the rerun, that cancel being final (the second vote's two transactions came
    // after it), approves and commits anew.
    const { argsA, argsB, shared, before } = await twoVotesNoAllowance();
    await killedAfterApproval(argsA);
    const b = await runCli(argsB, s.home, { env: s.sb.env() });
    expect(b.code, b.stdout + b.stderr).toBe(0);
    expect(b.stderr).toMatch(/"event":"tx\.cancel"/);
    const rerun = await runCli(argsA, s.home, { env: s.sb.env() });
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    expect(before - (await tokenBalance(s, 'LREP')), 'two stakes, each once').toBe(2_000_000n);
    const again = await runCli(argsA, s.home, { env: s.sb.env() });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(before - (await tokenBalance(s, 'LREP')), 'still two stakes').toBe(2_000_000n);
    expect(sharedSince(shared).statuses, 'no transaction journaled by two operations').toEqual([]);
  });

  it('both votes stopped after signing their approvals, the second past a cancel of the first one’s gap: the first waits for that to be final, and both are cast once', async () => {
    // Before nonce slots both signed the very same approval bytes (the nonce still free), and the first one's rerun
    // signed them a third time ("UNIQUE constraint failed" on every rerun).
    const { argsA, argsB, shared, before } = await twoVotesNoAllowance();
    for (const args of [argsA, argsB]) await killedAfterApproval(args);
    expect(sharedSince(shared).statuses, 'no transaction journaled by two operations').toEqual([]);
    // The cancel is mined and not final: nothing of the first vote is signed anew yet.
    const early = await runCli(argsA, s.home, { env: s.sb.env() });
    expect(early.code, early.stdout + early.stderr).toBe(4);
    expect(early.json().error.code).toBe('nonce_not_final');
    const rerunB = await runCli(argsB, s.home, { env: s.sb.env() });
    expect(rerunB.code, rerunB.stdout + rerunB.stderr).toBe(0);
    const rerunA = await runCli(argsA, s.home, { env: s.sb.env() });
    expect(rerunA.code, rerunA.stdout + rerunA.stderr).toBe(0);
    expect(before - (await tokenBalance(s, 'LREP')), 'two stakes, each once').toBe(2_000_000n);
    expect(sharedSince(shared).statuses).toEqual([]);
  });

  it("the first vote's gap cancelled while its rerun waits for the wallet: the rerun reads its journal anew, and both are cast once", async () => {
    // As above, but vote A's rerun is already running (its journal read, waiting for the wallet's claim) when vote B
    // signs the very same approval and drops A's record of it. A then settled its journaled transactions from what it
    // had read before the wait: its approval still 'signed', found mined (B's broadcast), recorded 'mined' again for
    // A (so counted twice), then its commit found the allowance spent by B's commit: approval_replaced (exit 4) on
    // every rerun.
    const { argsA, argsB, shared, before } = await twoVotesNoAllowance();
    await killedAfterApproval(argsA);
    // B's node holds its first gas estimate (B holds the wallet's claim by then, before it signs) until released.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let held!: () => void;
    const holding = new Promise<void>((r) => (held = r));
    let first = true;
    const server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      if (first && body.includes('"eth_estimateGas"')) {
        first = false;
        held();
        await released;
      }
      const answer = await fetch(s.sb.info.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const proxyUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const b = startCli([...argsB, '--rpc-url', proxyUrl], s.home, { env: s.sb.env() });
      await holding;
      const rerun = startCli(argsA, s.home, { env: s.sb.env() });
      await new Promise<void>((resolve) => {
        let seen = '';
        rerun.child.stderr!.on('data', (d: Buffer | string) => {
          seen += String(d);
          if (seen.includes('"wallet.wait"')) resolve();
        });
        rerun.done.then(() => resolve());
      });
      release();
      const bDone = await b.done;
      expect(bDone.code, bDone.stdout + bDone.stderr).toBe(0);
      expect(bDone.stderr).toMatch(/"event":"tx\.cancel"/);
      const aDone = await rerun.done;
      expect(aDone.code, aDone.stdout + aDone.stderr).toBe(0);
      expect(before - (await tokenBalance(s, 'LREP')), 'two stakes, each once').toBe(2_000_000n);
      // No transaction is two votes': the first one's approval slot was cancelled, and its calls signed anew.
      expect(sharedSince(shared).statuses).toEqual([]);
    } finally {
      release();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
