// The issue's property test (issue 20): random sets of 3–6 concurrent loopsign processes against one sandbox and one
// home — CLI asks with random amounts, payment modes and bonuses (some sharing a clientRequestId: the same file run
// twice), CLI votes with random stakes, an MCP server asking — under a spending policy (per ask, per vote, a rolling
// 24-hour window in USDC and LREP). A random subset is killed at a random moment (SIGKILL after a random delay, or
// LOOPSIGN_CRASH_AFTER at a random step), and the killed ones are optionally run again. Then, from the database and
// from the chain:
//   - what left each wallet is within the caps of the ask files and stakes it ran, and is accounted for by what the
//     database says the wallet's signatures can pay; what left all wallets fits each window;
//   - every transaction on chain from either wallet is recorded in the database;
//   - no operation's exposure (live effects, per spender the larger of allowed and pulled) exceeds its file's caps or
//     the policy's perAsk / perRating, and the usage rows of the last 24 hours fit each window;
//   - the hourly sums equal the usage rows;
//   - no process ended in an internal error.
// A process sharing an earlier one's ask file may use another payment mode: the same operation, switched; so may a
// killed ask's rerun.
// The rare endings lean on kills and reruns (issue 40: spend_limit, plan_changed and approval_replaced came up a
// handful of times in thousands of processes, and an overspend hides in rare paths), so the generator leans towards
// the kill points that reach them (RARE_POINTS), each case runs episodes that meet them (`Episodes`), and a default
// run fails unless each came up at least 50 times.
// Bounded by case count, not time: LOOPSIGN_PROPERTY_RUNS=N runs N cases (default 15); a failure
// prints the command that replays it, and the failing case's story (what each process ended with) goes to the file it
// names (test/helpers/property.ts). The run prints a tally of how every process ended.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { assertAsyncProperty, replaying } from './helpers/property.js';
import { parseAbi, type Hex } from 'viem';
import { makeHome, startCli, TEST_ADDRESS, TEST_PRIVATE_KEY, type Home, type RunResult } from './helpers/cli.js';
import { openSession, type Session } from './helpers/chain.js';
import { startMcp } from './helpers/mcp.js';
import { storeFile, withStore } from './helpers/store.js';
import { existsSync } from 'node:fs';
import { capture } from './helpers/capture.js';
import { startRpcProxy } from './helpers/rpc-proxy.js';

const RUNS = Math.max(1, Number(process.env.LOOPSIGN_PROPERTY_RUNS ?? 15));

const USDC = 1_000_000n;
const WALLET_POINTS = [
  'ask:planned',
  'ask:signed:0',
  'ask:mined:0',
  'ask:signed:1',
  'ask:mined:1',
  'ask:signed:2',
  'ask:executed',
  'ask:confirmed',
  'bonus:planned',
  'bonus:signed:0',
  'bonus:mined:0',
  'bonus:signed:1',
  'bonus:executed',
];
const X402_POINTS = ['ask:planned', 'ask:x402_signed', 'ask:signed:0', 'ask:mined:0', 'ask:executed', 'ask:confirmed'];
const RATE_POINTS = ['rate:built', 'rate:planned', 'rate:1:signed:0', 'rate:1:mined:0', 'rate:1:signed:1', 'rate:confirmed'];
// Where a killed ask, run again, meets a rare ending:
//  - killed once its x402 authorization is signed, run again with wallet_calls: the authorization counts against the
//    ask's cap until it expires, so the wallet plan's payment would be a second one (spend_limit);
//  - killed once a wallet_calls transaction is signed or mined, run again with x402: a second way to pay (plan_changed);
//  - killed once its approval is mined, before the submit that pulls it, while another ask from the same wallet
//    approves the same escrow and pays: run again, its approval is no longer there (approval_replaced).
const RARE_POINTS: Record<Ask['mode'], string[]> = {
  wallet_calls: ['ask:signed:0', 'ask:mined:0', 'ask:mined:1', 'ask:mined:1'],
  x402_authorization: ['ask:x402_signed'],
};
const RARE_ENDINGS = ['spend_limit', 'plan_changed', 'approval_replaced'];
// What a process may end with besides success: refused by the policy or a cap (5), another process on the same
// operation (journal_locked), a killed run's approval replaced by another operation's (approval_replaced), killed (-1).
const ALLOWED_ERRORS = new Set(['policy_limit', 'spend_limit', 'journal_locked', 'approval_replaced', 'wallet_busy']);

type Kill = { kind: 'none' } | { kind: 'signal'; afterMs: number } | { kind: 'crash'; point: string };
interface Ask {
  kind: 'ask';
  wallet: 0 | 1;
  mode: 'wallet_calls' | 'x402_authorization';
  bounty: bigint;
  bonus: bigint;
  slack: bigint;
  /** Run the same file as the ask at this index (if it is an ask): the same clientRequestId, an identical rerun. */
  sameAs: number | undefined;
  kill: Kill;
  /** When killed and run again: in the same payment mode, or in the other. */
  rerunMode: 'same' | 'switched';
}
interface Rate {
  kind: 'rate';
  wallet: 0 | 1;
  stake: bigint;
  sameAs: number | undefined;
  kill: Kill;
}
type Proc = Ask | Rate;
/**
 * The rare endings met on purpose, beside the random processes (issue 40: each at least 50 times in a default run; a
 * random episode count and kill point met each 24 to 37 times in 15 cases, and spent most of its runs on asks the
 * policy refused). The episode asks fit perAsk, and the window has room for what they can pay beside the generated
 * one (`windowOf`), so a tight window refuses mostly random processes and each episode meets its ending:
 *   spend, four a case: killed once its x402 authorization is signed; run again with wallet_calls (spend_limit: the
 *     authorization counts against the ask's cap until it expires); maybe resumed as it started.
 *   trios, one per wallet: three asks (bounties 1, 1.5 and 2 USDC, no bonus; the wallet's lock orders them at random)
 *     killed once their approvals are mined. Approvals set, not add: the wallet's allowance to the escrow is the last
 *     one mined, or one a random process set later, at most 2 USDC, which pays at most one of the three. Two of them
 *     are run again with x402 (plan_changed: a wallet_calls transaction is mined), then, alone, all three with
 *     wallet_calls: at most one finds an allowance it can use and pays, the others end in approval_replaced.
 *   plan (maybe): killed once a wallet_calls transaction is signed or mined, run again with x402 (plan_changed).
 */
interface SpendEpisode {
  wallet: 0 | 1;
  bounty: bigint;
  bonus: bigint;
  resume: boolean;
}
interface Trio {
  /** The one of the three (by bounty: 1, 1.5, 2 USDC) not run again with x402. */
  notSwitched: number;
}
const TRIO_BOUNTIES = [USDC, (3n * USDC) / 2n, 2n * USDC];
interface PlanEpisode {
  wallet: 0 | 1;
  bounty: bigint;
  bonus: bigint;
  point: string;
}
interface Episodes {
  spend: SpendEpisode[];
  trios: [Trio, Trio];
  plan: PlanEpisode | undefined;
}
interface Case {
  procs: Proc[];
  mcp: Ask | undefined;
  episodes: Episodes;
  rerun: boolean;
  /** A slow node (every request delayed this long), or the sandbox's own. */
  rpcDelayMs: number;
  policy: { perAsk: bigint; perRating: bigint; windowUsdc: bigint; windowLrep: bigint };
}

const kill = (points: string[], rare: string[] = []): fc.Arbitrary<Kill> =>
  fc.oneof(
    { weight: 2, arbitrary: fc.constant<Kill>({ kind: 'none' }) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 5000 }).map<Kill>((afterMs) => ({ kind: 'signal', afterMs })) },
    { weight: 1, arbitrary: fc.constantFrom(...points).map<Kill>((point) => ({ kind: 'crash', point })) },
    ...(rare.length ? [{ weight: 3, arbitrary: fc.constantFrom(...rare).map<Kill>((point) => ({ kind: 'crash', point })) }] : []),
  );
const wallet = fc.constantFrom<0 | 1>(0, 1);
const sameAs = fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.nat(5) });
const ask: fc.Arbitrary<Ask> = fc
  .record({
    wallet,
    mode: fc.constantFrom<Ask['mode']>('wallet_calls', 'wallet_calls', 'x402_authorization'),
    bounty: fc.constantFrom(2n, 3n, 4n).map((h) => (h * USDC) / 2n),
    bonus: fc.constantFrom(0n, 0n, USDC / 2n, USDC),
    slack: fc.constantFrom(0n, USDC / 2n),
    sameAs,
    rerunMode: fc.constantFrom<Ask['rerunMode']>('same', 'switched'),
  })
  .chain((a) =>
    kill(a.mode === 'wallet_calls' ? WALLET_POINTS : X402_POINTS, RARE_POINTS[a.mode]).map((k) => ({
      kind: 'ask' as const,
      ...a,
      kill: k,
    })),
  );
const rate: fc.Arbitrary<Rate> = fc
  .record({ wallet, stake: fc.constantFrom(1n, 2n, 3n).map((l) => l * USDC), sameAs, kill: kill(RATE_POINTS) })
  .map((r) => ({ kind: 'rate' as const, ...r }));
const amounts = { bounty: fc.constantFrom(2n, 3n, 4n).map((h) => (h * USDC) / 2n), bonus: fc.constantFrom(0n, 0n, USDC / 2n) };
const trio: fc.Arbitrary<Trio> = fc.record({ notSwitched: fc.constantFrom(0, 1, 2) });
const episodes: fc.Arbitrary<Episodes> = fc.record({
  spend: fc.array(
    fc.record({
      wallet,
      ...amounts,
      resume: fc.oneof({ weight: 1, arbitrary: fc.constant(true) }, { weight: 2, arbitrary: fc.constant(false) }),
    }),
    {
      minLength: 4,
      maxLength: 4,
    },
  ),
  trios: fc.tuple(trio, trio),
  plan: fc.option(fc.record({ wallet, ...amounts, point: fc.constantFrom('ask:signed:0', 'ask:mined:0', 'ask:signed:1', 'ask:mined:1') }), {
    nil: undefined,
    freq: 2,
  }),
});
const testCase: fc.Arbitrary<Case> = fc
  .record({
    episodes,
    procs: fc.array(fc.oneof({ weight: 3, arbitrary: ask as fc.Arbitrary<Proc> }, { weight: 1, arbitrary: rate as fc.Arbitrary<Proc> }), {
      minLength: 2,
      maxLength: 5,
    }),
    mcp: fc.option(ask, { nil: undefined, freq: 2 }),
    rerun: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    rpcDelayMs: fc.constantFrom(0, 0, 40, 150),
    // A tight policy refuses most processes before they sign (policy_limit was 29 of 70 endings, then 60 of 179 with
    // the episodes), and a refused process reaches no rare ending: most cases' policies refuse nothing an ask file
    // allows; the tight ones stay.
    policy: fc.record({
      perAsk: fc.constantFrom(2n, 3n, 4n, 4n, 4n, 4n).map((u) => u * USDC),
      perRating: fc.constantFrom(2n, 3n).map((l) => l * USDC),
      windowUsdc: fc.constantFrom(2n, 3n, 4n, 6n, 12n, 40n, 40n, 40n, 40n, 40n).map((u) => u * USDC),
      windowLrep: fc.constantFrom(2n, 4n).map((l) => l * USDC),
    }),
  })
  // 3 to 6 processes in all.
  .filter((c) => c.procs.length + (c.mcp ? 1 : 0) >= 3)
  // An episode's ask fits perAsk (a refused one meets no rare ending): its bonus goes where bounty and bonus would not.
  .map((c) => {
    const fit = <E extends { bounty: bigint; bonus: bigint }>(e: E): E => (e.bounty + e.bonus > c.policy.perAsk ? { ...e, bonus: 0n } : e);
    return { ...c, episodes: { ...c.episodes, spend: c.episodes.spend.map(fit), plan: c.episodes.plan && fit(c.episodes.plan) } };
  });

/** What the episodes' asks can pay in all (the trios' 1 + 1.5 + 2 USDC each). */
const episodesNeed = (e: Episodes): bigint =>
  [...e.spend, ...(e.plan ? [e.plan] : [])].reduce((t, a) => t + a.bounty + a.bonus, 0n) + 2n * TRIO_BOUNTIES.reduce((t, b) => t + b, 0n);
/**
 * The case's USDC window: the generated one is what the random processes compete for (a tight one refuses some of
 * them), and the episodes' asks have room beside it, since they sign first. Every invariant checks this window.
 */
const windowOf = (c: Case): bigint => c.policy.windowUsdc + episodesNeed(c.episodes);

/** How the processes of the run ended (success, killed, or the error code), over every case: printed when the run ends. */
const tally = new Map<string, number>();
const endOf = (o: Outcome): string => (o.code === 0 ? 'ok' : o.code === -1 ? 'killed' : (o.error ?? `exit ${o.code}`));
/** The case running now: what its processes ended with, for the story of a failure (the property ends on its first). */
let lastStory: Record<string, unknown> | undefined;
const bigints = (_k: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);

let s: Session;
let wallets: Hex[];
let seq = 0;
const erc20 = parseAbi(['function balanceOf(address) view returns (uint256)']);

beforeAll(async () => {
  s = await openSession({ rateLimits: { write: 100_000, read: 100_000 }, raters: false });
  wallets = [s.sb.info.devWallet.address.toLowerCase() as Hex, TEST_ADDRESS.toLowerCase() as Hex];
});
const tallyLine = () =>
  `store property: how ${[...tally.values()].reduce((a, b) => a + b, 0)} processes ended: ${[...tally]
    .sort(([, a], [, b]) => b - a)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')}`;
afterAll(async () => {
  await s?.sb.stop();
  console.log(tallyLine());
  capture.summary(tallyLine());
});

// Wallet 1 signs with a raw key: the keystore is left out, since naming both is a signer conflict (exit 2).
const walletEnv = (w: 0 | 1, rpcUrl: string | undefined): Record<string, string> => {
  const { LOOPSIGN_KEYSTORE, LOOPSIGN_PASSWORD_FILE, ...rest } = s.sb.env();
  return {
    ...rest,
    ...(w === 1 ? { LOOPSIGN_PRIVATE_KEY: TEST_PRIVATE_KEY } : { LOOPSIGN_KEYSTORE, LOOPSIGN_PASSWORD_FILE }),
    ...(rpcUrl ? { LOOPSIGN_RPC_URL: rpcUrl } : {}),
  };
};
const balance = (token: 'USDC' | 'LREP', w: Hex) =>
  s.pub.readContract({ address: s.sb.info.tokens[token].address, abi: erc20, functionName: 'balanceOf', args: [w] }) as Promise<bigint>;

/** The ask file of a process (a shared one is the very same file), and the caps it sets. */
interface Planned {
  proc: Proc;
  args: string[];
  env: Record<string, string | undefined>;
  clientRequestId?: string;
  contentId?: string;
}

interface Outcome {
  code: number;
  error?: string;
  message?: string;
}

/** Runs one process, killing it as planned; never throws for the process's own failure. */
async function runProc(home: Home, p: Planned, k: Kill): Promise<Outcome> {
  const env = k.kind === 'crash' ? { ...p.env, LOOPSIGN_CRASH_AFTER: k.point } : p.env;
  const run = startCli(p.args, home, { env, timeoutMs: 240_000 });
  const timer = k.kind === 'signal' ? setTimeout(() => run.child.kill('SIGKILL'), k.afterMs) : undefined;
  const r: RunResult = await run.done;
  clearTimeout(timer);
  return outcomeOf(r.code, r.stdout);
}

function outcomeOf(code: number, stdout: string): Outcome {
  if (code === 0 || code === -1) return { code };
  try {
    const e = JSON.parse(stdout.trim().split('\n').at(-1)!).error;
    return { code, error: e?.code, message: String(e?.message).slice(0, 300) };
  } catch {
    return { code, error: `unparsed: ${stdout.slice(0, 200)}` };
  }
}

/** The MCP server's ask: a server started for it, the tool called, the server killed as planned. */
async function runMcpAsk(home: Home, p: Planned, k: Kill): Promise<Outcome> {
  const file = p.args[p.args.indexOf('--file') + 1]!;
  const mode = p.args[p.args.indexOf('--payment-mode') + 1]!;
  const m = await startMcp(home, { env: k.kind === 'crash' ? { ...p.env, LOOPSIGN_CRASH_AFTER: k.point } : p.env });
  const timer = k.kind === 'signal' ? setTimeout(() => m.child.kill('SIGKILL'), k.afterMs) : undefined;
  let outcome: Outcome;
  try {
    const r = await m.call('loopsign_ask', { file, paymentMode: mode }, { timeout: 240_000 });
    outcome = r.isError
      ? { code: r.doc.error.exitCode, error: r.doc.error.code, message: String(r.doc.error.message).slice(0, 300) }
      : { code: 0 };
  } catch (error) {
    outcome = { code: -1, error: String(error).slice(0, 200) };
  }
  clearTimeout(timer);
  await m.stop();
  // A call that failed without the server being killed is a failure of its own, not a kill.
  if (outcome.code === -1 && m.child.signalCode === null) outcome = { code: 98, error: `the MCP call failed: ${outcome.error}` };
  return outcome;
}

async function onChainTxsFrom(from: bigint, to: bigint): Promise<{ hash: string; from: string }[]> {
  const out: { hash: string; from: string }[] = [];
  for (let b = from; b <= to; b++) {
    const block = await s.pub.getBlock({ blockNumber: b, includeTransactions: true });
    for (const t of block.transactions)
      if (typeof t !== 'string' && wallets.includes(t.from.toLowerCase() as Hex))
        out.push({ hash: t.hash.toLowerCase(), from: t.from.toLowerCase() });
  }
  return out;
}

/** A read of the run's database; `none` when no process got as far as opening it (every one refused before). */
const read = <T>(home: Home, none: T, fn: Parameters<typeof withStore<T>>[1]): T =>
  existsSync(storeFile(home)) ? withStore(home, fn) : none;

/** Per operation and asset: what its live effects can make the wallet pay (per spender the larger of allowed and pulled), by SQL alone. */
function exposures(
  home: Home,
): { operation: string; kind: string; wallet: string; data: string; asset: string; stage: string; amount: bigint }[] {
  return read(
    home,
    [],
    (db) =>
      db
        .prepare(
          `SELECT o.id AS operation, o.kind, o.wallet, o.data, e.asset, e.stage, SUM(e.m) AS amount FROM (
           SELECT operation_id, asset, CASE WHEN stage LIKE 'rate:%' THEN stage ELSE '' END AS stage, spender,
                  MAX(COALESCE(SUM(CASE WHEN kind = 'pull' THEN amount END), 0), COALESCE(SUM(CASE WHEN kind <> 'pull' THEN amount END), 0)) AS m
           FROM effects WHERE live = 1 GROUP BY operation_id, asset, 3, spender) e
         JOIN operations o ON o.id = e.operation_id GROUP BY o.id, e.asset, e.stage`,
        )
        .safeIntegers(true)
        .all() as { operation: string; kind: string; wallet: string; data: string; asset: string; stage: string; amount: bigint }[],
  );
}

async function check(c: Case): Promise<void> {
  const n = seq++;
  lastStory = { case: n, generated: c };
  const home = makeHome();
  mkdirSync(path.join(home.env.XDG_CONFIG_HOME, 'loopsign'), { recursive: true });
  const policy = {
    version: 1,
    perAsk: { maxUsdc: String(c.policy.perAsk) },
    perRating: { maxStakeLrep: String(c.policy.perRating) },
    rolling24h: { '31337': { maxUsdc: String(windowOf(c)), maxLrep: String(c.policy.windowLrep) } },
  };
  writeFileSync(path.join(home.env.XDG_CONFIG_HOME, 'loopsign', 'policy.json'), JSON.stringify(policy));
  for (const w of wallets)
    await s.sb.control('/__sandbox/fund', { address: w, usdc: String(20n * USDC), lrep: String(20n * USDC), eth: '10' });
  const proxy = c.rpcDelayMs > 0 ? await startRpcProxy(s.sb.info.rpcUrl, { delayMs: c.rpcDelayMs }) : undefined;
  try {
    await runCase(c, n, home, proxy?.url);
  } finally {
    await proxy?.close();
  }
}

async function runCase(c: Case, n: number, home: Home, rpcUrl: string | undefined): Promise<void> {
  // Each process's command line; a process sharing an earlier one of its kind runs the very same command.
  const all: Proc[] = [...c.procs, ...(c.mcp ? [c.mcp] : [])];
  const planned: Planned[] = [];
  const asks = new Map<string, Ask>();
  const stakes = new Map<string, Rate>();
  /** A new ask file, and the command that runs it. */
  const askOf = (key: string, p: Ask): Planned => {
    const clientRequestId = `prop-${process.pid}-${n}-${key}`;
    const file = home.file(
      `ask-${key}.json`,
      JSON.stringify({
        chainId: 31337,
        clientRequestId,
        maxPaymentAmount: String(p.bounty + p.bonus + p.slack),
        bounty: { amount: String(p.bounty), asset: 'USDC', requiredVoters: '3' },
        ...(p.bonus > 0n ? { feedbackBonus: { amount: String(p.bonus), asset: 'USDC' } } : {}),
        question: { title: `Property ${n}.${key}`, contextUrl: 'https://example.com/property', categoryId: '1', tags: ['property'] },
      }),
    );
    asks.set(clientRequestId, p);
    return {
      proc: p,
      args: ['--json', 'ask', '--file', file, '--payment-mode', p.mode],
      env: walletEnv(p.wallet, rpcUrl),
      clientRequestId,
    };
  };
  /** The same command in another payment mode, killed as given. */
  const inMode = (p: Planned, mode: Ask['mode'], k: Kill): Planned => ({
    ...p,
    args: p.args.map((a, j) => (p.args[j - 1] === '--payment-mode' ? mode : a)),
    proc: { ...(p.proc as Ask), mode, kill: k },
  });
  for (const [i, p] of all.entries()) {
    const earlier = p.sameAs !== undefined && p.sameAs < i ? planned[p.sameAs] : undefined;
    if (earlier && earlier.proc.kind === p.kind) {
      // The same file from the same wallet: the same operation, run again — an ask possibly with another payment
      // mode (what a switch could pay twice is the ledger's to stop).
      const args = p.kind === 'ask' ? earlier.args.map((a, k) => (earlier.args[k - 1] === '--payment-mode' ? p.mode : a)) : earlier.args;
      planned.push({
        ...earlier,
        args,
        proc: { ...earlier.proc, ...(p.kind === 'ask' ? { mode: p.mode, rerunMode: p.rerunMode } : {}), kill: p.kill } as Proc,
      });
      continue;
    }
    if (p.kind === 'ask') {
      planned.push(askOf(`${i}`, p));
    } else {
      const contentId = String((await s.sb.control('/__sandbox/content', {})).contentId);
      stakes.set(`${wallets[p.wallet]}:${contentId}`, p);
      planned.push({
        proc: p,
        args: ['--json', 'rate', '--content-id', contentId, '--up', '--prediction', '60', '--stake', String(Number(p.stake) / 1e6)],
        env: walletEnv(p.wallet, rpcUrl),
        contentId,
      });
    }
  }
  const mcpAt = c.mcp ? planned.length - 1 : -1;

  const before = await Promise.all(wallets.map(async (w) => ({ usdc: await balance('USDC', w), lrep: await balance('LREP', w) })));
  const startBlock = (await s.pub.getBlockNumber()) + 1n;

  // The episodes' runs, stage by stage: the first beside the random processes, the second beside their reruns, the
  // third alone (no random process changes the wallets' allowances meanwhile).
  const none: Kill = { kind: 'none' };
  const other = (m: Ask['mode']): Ask['mode'] => (m === 'wallet_calls' ? 'x402_authorization' : 'wallet_calls');
  const stages: { p: Planned; what: string }[][] = [[], [], []];
  const episodeAsk = (wallet: 0 | 1, mode: Ask['mode'], bounty: bigint, bonus: bigint): Ask => ({
    kind: 'ask',
    wallet,
    mode,
    bounty,
    bonus,
    slack: 0n,
    sameAs: undefined,
    kill: none,
    rerunMode: 'same',
  });
  for (const [k, e] of c.episodes.spend.entries()) {
    const f = askOf(`s${k}`, episodeAsk(e.wallet, 'x402_authorization', e.bounty, e.bonus));
    const what = `spend episode ${k}`;
    stages[0]!.push({
      p: inMode(f, 'x402_authorization', { kind: 'crash', point: 'ask:x402_signed' }),
      what: `${what}, killed at ask:x402_signed`,
    });
    stages[1]!.push({ p: inMode(f, 'wallet_calls', none), what: `${what}, run again with wallet_calls` });
    if (e.resume) stages[2]!.push({ p: f, what: `${what}, resumed` });
  }
  for (const [w, t] of c.episodes.trios.entries()) {
    for (const [k, bounty] of TRIO_BOUNTIES.entries()) {
      const f = askOf(`t${w}${k}`, episodeAsk(w as 0 | 1, 'wallet_calls', bounty, 0n));
      const what = `wallet ${w}'s trio ask ${k}`;
      stages[0]!.push({ p: inMode(f, 'wallet_calls', { kind: 'crash', point: 'ask:mined:1' }), what: `${what}, killed at ask:mined:1` });
      if (t.notSwitched !== k) stages[1]!.push({ p: inMode(f, 'x402_authorization', none), what: `${what}, run again with x402` });
      stages[2]!.push({ p: f, what: `${what}, run again` });
    }
  }
  const pe = c.episodes.plan;
  if (pe) {
    const f = askOf('p', episodeAsk(pe.wallet, 'wallet_calls', pe.bounty, pe.bonus));
    stages[0]!.push({ p: inMode(f, 'wallet_calls', { kind: 'crash', point: pe.point }), what: `plan episode, killed at ${pe.point}` });
    stages[1]!.push({ p: inMode(f, 'x402_authorization', none), what: 'plan episode, run again with x402' });
  }

  const start = (p: Planned, i: number, k: Kill) => (i === mcpAt ? runMcpAsk(home, p, k) : runProc(home, p, k));
  const runStage = (r: { p: Planned }[]) => Promise.all(r.map(({ p }) => runProc(home, p, p.proc.kill)));
  const t0 = Date.now();
  const [outcomes, episodes0] = await Promise.all([Promise.all(planned.map((p, i) => start(p, i, p.proc.kill))), runStage(stages[0]!)]);
  const t1 = Date.now();
  // A killed process run again, an ask possibly in the other payment mode: the same command but for --payment-mode.
  const again = planned.map(
    (p): Planned => (p.proc.kind !== 'ask' || p.proc.rerunMode === 'same' ? p : inMode(p, other(p.proc.mode), p.proc.kill)),
  );
  const [reruns, episodes1] = await Promise.all([
    c.rerun ? Promise.all(again.map((p, i) => (outcomes[i]!.code === -1 ? start(p, i, none) : undefined))) : [],
    runStage(stages[1]!),
  ]);
  const t2 = Date.now();
  const episodes2 = await runStage(stages[2]!);
  const timing = { stages: [t1 - t0, t2 - t1, Date.now() - t2] };
  // Every run (the first ones, then the reruns, then the episodes') with the command it ran and how it was to end.
  const ran = [
    ...outcomes.map((o, i) => ({ o, p: planned[i]!, what: `process ${i}`, kill: planned[i]!.proc.kill })),
    ...reruns.flatMap((o, i) => (o ? [{ o, p: again[i]!, what: `process ${i}'s rerun`, kill: none }] : [])),
    ...[episodes0, episodes1, episodes2].flatMap((os, r) => os.map((o, i) => ({ o, ...stages[r]![i]!, kill: stages[r]![i]!.p.proc.kill }))),
  ];
  const current: Record<string, unknown> = { case: n, generated: c, ran: ran.map(({ o, what }) => ({ what, ...o })) };
  lastStory = current;
  for (const { o } of ran) tally.set(endOf(o), (tally.get(endOf(o)) ?? 0) + 1);

  // No process ended in an internal error, or a refusal the processes' races do not explain.
  for (const { o, what, kill } of ran)
    expect(o.code === -1 && kill.kind === 'none', `${what} was killed at the test's timeout`).toBe(false);
  // An ask another process runs in the other payment mode may also be refused as a switch (plan_changed, exit 5):
  // once one mode's payment is signed or mined, the other would be a second way to pay (src/ask/submit.ts).
  const switched = (r: (typeof ran)[number]): boolean =>
    r.p.proc.kind === 'ask' &&
    ran.some((q) => q !== r && q.p.clientRequestId === r.p.clientRequestId && (q.p.proc as Ask).mode !== (r.p.proc as Ask).mode);
  const operationOf = (p: Planned): string => `${p.proc.wallet}:${p.clientRequestId ?? p.contentId}`;
  // A killed run's signed, unsent transaction leaves a gap at its nonce, which another process sending from the wallet
  // fills: the operation run again must wait until the chain says whether its step paid (nonce_not_final, "nothing
  // else was signed"; seen at seed -2141298612, case 11: a random ask killed at ask:signed:0 beside a trio).
  const rerunOfKilled = (r: (typeof ran)[number]): boolean =>
    ran.some((q) => q !== r && q.o.code === -1 && operationOf(q.p) === operationOf(r.p));
  for (const r of ran) {
    const { o, what } = r;
    expect(o.code, `${what} ended in an internal error: ${o.message}`).not.toBe(1);
    if (o.code !== 0 && o.code !== -1) {
      const allowed =
        ALLOWED_ERRORS.has(o.error ?? '') ||
        (o.error === 'plan_changed' && o.code === 5 && switched(r)) ||
        (o.error === 'nonce_not_final' && rerunOfKilled(r));
      expect(allowed, `${what} ended in ${o.error}: ${o.message}`).toBe(true);
    }
  }

  // The chain: what left each wallet, and every transaction from it.
  const latest = await s.pub.getBlockNumber();
  const after = await Promise.all(wallets.map(async (w) => ({ usdc: await balance('USDC', w), lrep: await balance('LREP', w) })));
  const left = wallets.map((_, i) => ({ usdc: before[i]!.usdc - after[i]!.usdc, lrep: before[i]!.lrep - after[i]!.lrep }));
  const sent = await onChainTxsFrom(startBlock, latest);
  Object.assign(current, { left, sent });
  const recorded = new Set(
    // A transaction, or another version of a transaction's nonce slot (a cancel loopsign signed to fill a gap a killed
    // run left): every one journaled before it was sent.
    read(home, [], (db) =>
      (db.prepare('SELECT hash FROM transactions UNION ALL SELECT hash FROM slot_versions').all() as { hash: string }[]).map((r) =>
        r.hash.toLowerCase(),
      ),
    ),
  );
  expect(
    sent.filter((t) => !recorded.has(t.hash)),
    'transactions on chain missing from the database',
  ).toEqual([]);

  // The database: each operation within its file's caps and the policy's per-ask / per-vote limits.
  const rows = exposures(home);
  for (const r of rows) {
    if (r.kind === 'ask') {
      const a = asks.get(JSON.parse(r.data).clientRequestId);
      expect(a, `an ask operation no process ran: ${r.operation}`).toBeDefined();
      expect(r.asset, `${r.operation}'s asset`).toBe('USDC');
      expect(r.amount, `${r.operation} can pay ${r.amount}, above its file's bounty + bonus`).toBeLessThanOrEqual(a!.bounty + a!.bonus);
      expect(r.amount, `${r.operation} above perAsk`).toBeLessThanOrEqual(c.policy.perAsk);
    } else if (r.kind === 'rate' && r.stage.startsWith('rate:')) {
      const v = stakes.get(`${r.wallet}:${JSON.parse(r.data).contentId}`);
      expect(v, `a vote no process cast: ${r.operation}`).toBeDefined();
      expect(r.asset, `${r.operation}'s asset`).toBe('LREP');
      expect(r.amount, `${r.operation} ${r.stage} can stake ${r.amount}, above --stake`).toBeLessThanOrEqual(v!.stake);
      expect(r.amount, `${r.operation} above perRating`).toBeLessThanOrEqual(c.policy.perRating);
    } else {
      expect(r.amount, `${r.kind} ${r.operation} ${r.stage} can pay`).toBe(0n);
    }
  }
  const exposed = (w: Hex, asset: string) => rows.filter((r) => r.wallet === w && r.asset === asset).reduce((t, r) => t + r.amount, 0n);
  const windowRows = read(
    home,
    [],
    (db) =>
      db
        .prepare('SELECT asset, SUM(amount) AS used FROM usage WHERE at >= ? GROUP BY asset')
        .safeIntegers(true)
        .all(Date.now() - 86_400_000) as { asset: string; used: bigint }[],
  );
  const used = (asset: string) => windowRows.find((r) => r.asset === asset)?.used ?? 0n;
  expect(used('USDC'), "the 24-hour window's USDC rows").toBeLessThanOrEqual(windowOf(c));
  expect(used('LREP'), "the 24-hour window's LREP rows").toBeLessThanOrEqual(c.policy.windowLrep);

  // The hourly sums are the rows' sums.
  const drift = read(home, [], (db) =>
    db
      .prepare(
        `SELECT r.chain_id, r.hour, r.asset, r.amount AS rows, COALESCE(h.amount, 0) AS hourly FROM
           (SELECT chain_id, at / 3600000 AS hour, asset, SUM(amount) AS amount FROM usage GROUP BY 1, 2, 3) r
           LEFT JOIN usage_hourly h USING (chain_id, hour, asset) WHERE r.amount <> COALESCE(h.amount, 0)
         UNION ALL
         SELECT h.chain_id, h.hour, h.asset, 0, h.amount FROM usage_hourly h WHERE h.amount <> 0 AND NOT EXISTS
           (SELECT 1 FROM usage u WHERE u.chain_id = h.chain_id AND u.at / 3600000 = h.hour AND u.asset = h.asset)`,
      )
      .all(),
  );
  expect(drift, 'the hourly sums drift from the usage rows').toEqual([]);

  // The chain again: what left each wallet is what its files and stakes allow, what the database says it can pay,
  // and together what the windows allow.
  for (const [i, w] of wallets.entries()) {
    const fileCaps = [...asks.values()].filter((a) => wallets[a.wallet] === w).reduce((t, a) => t + a.bounty + a.bonus, 0n);
    const stakeCaps = [...stakes.values()].filter((v) => wallets[v.wallet] === w).reduce((t, v) => t + v.stake, 0n);
    expect(left[i]!.usdc, `USDC that left ${w} beyond its ask files`).toBeLessThanOrEqual(fileCaps);
    expect(left[i]!.lrep, `LREP that left ${w} beyond its stakes`).toBeLessThanOrEqual(stakeCaps);
    expect(left[i]!.usdc, `USDC that left ${w} beyond what the database says it can pay`).toBeLessThanOrEqual(exposed(w, 'USDC'));
    expect(left[i]!.lrep, `LREP that left ${w} beyond what the database says it can pay`).toBeLessThanOrEqual(exposed(w, 'LREP'));
  }
  expect(
    left.reduce((t, l) => t + l.usdc, 0n),
    'USDC beyond the 24-hour window',
  ).toBeLessThanOrEqual(windowOf(c));
  expect(
    left.reduce((t, l) => t + l.lrep, 0n),
    'LREP beyond the 24-hour window',
  ).toBeLessThanOrEqual(c.policy.windowLrep);

  if (process.env.LOOPSIGN_PROPERTY_VERBOSE)
    console.log(
      `case ${n}: ${JSON.stringify({ generated: c, ran: current.ran }, bigints)}\n  left ${JSON.stringify(left, bigints)}, ${sent.length} transactions, stages ${timing.stages.join(' / ')} ms`,
    );
  capture.count('store property cases', `case ${n}`);
  capture.count('store property processes killed', `case ${n}`, ran.filter(({ o }) => o.code === -1).length);
}

describe('random concurrent processes and kills against one database', () => {
  it(
    `the sum of effects never exceeds any cap or window (${RUNS} cases)`,
    async () => {
      await assertAsyncProperty(
        fc.asyncProperty(testCase, (c) => check(c)),
        { numRuns: RUNS, endOnFailure: true, story: () => JSON.stringify(lastStory, bigints, 1) },
      );
      // Not vacuous: a default run meets every rare ending at least 50 times (issue 40; the episodes alone meet
      // spend_limit 4 times a case, plan_changed at least 4 and approval_replaced at least 4). A replayed case or a
      // shorter run need not.
      if (RUNS >= 15 && !replaying())
        for (const ending of RARE_ENDINGS)
          expect(tally.get(ending) ?? 0, `${ending} in a default run: ${tallyLine()}`).toBeGreaterThanOrEqual(50);
    },
    120_000 + RUNS * 240_000,
  );
});
