// Rating, as a user runs it against a real sandbox: a staked vote, an advisory vote, a vote that first opens the
// round, a vote on gated content; the keeper (or `rate reveal`) reveals each and the revealed direction and
// prediction equal what was committed. Hostile rating plans and messages are refused with exit 5.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createWalletClient, http, parseAbi, toFunctionSelector, toHex, type Hex } from 'viem';
import { filesUnder, findSecret, makeHome, readVector, runCli, type Home } from './helpers/cli.js';
import { api, type SandboxHandle } from './helpers/sandbox.js';
import { tlockDecrypt } from '../src/vote/tlock.js';
import { decodeVotePlaintext, commitHash } from '../src/vote/commit.js';
import { capture } from './helpers/capture.js';
import { fundedWallet, openSession, storedCommit, type Pub } from './helpers/chain.js';
import { recorded, recordedOfKind, storeFile, withStore } from './helpers/store.js';

const engineAbi = parseAbi([
  'function balanceOf(address) view returns (uint256)',
  'function allowance(address,address) view returns (uint256)',
]);
let sb: SandboxHandle;
let home: Home;
let pub: Pub;
const run = (args: string[]) => runCli(args, home, { env: sb.env() });
const newContent = async (body: Record<string, unknown> = {}) => String((await sb.control('/__sandbox/content', body)).contentId);
const lrep = async () =>
  (await pub.readContract({
    address: sb.info.tokens.LREP.address,
    abi: engineAbi,
    functionName: 'balanceOf',
    args: [sb.info.devWallet.address],
  })) as bigint;

/**
 * Nothing staked since `before`: the balance did not go down. It may go up meanwhile: a round settled earlier returns
 * its stakes when the keeper applies the engine's timeout settlement (an hour of chain time after settleRound, as
 * live), in whichever background pass comes first.
 */
async function expectNothingStaked(before: bigint) {
  expect(await lrep()).toBeGreaterThanOrEqual(before);
}

async function passTime(seconds = 1300) {
  await sb.control('/__sandbox/time', { advanceSeconds: seconds });
  for (let i = 0; i < 4; i++) await sb.control('/__sandbox/keeper/tick', {});
}

async function network() {
  const info = (await api(sb.info.baseUrl, 'GET', `/drand/${sb.info.drand.chainHash}/info`)).body;
  return {
    name: 'sandbox',
    chainHash: info.hash,
    genesis: info.genesis_time,
    period: info.period,
    publicKey: info.public_key,
    scheme: info.schemeID,
  };
}

async function decryptJournal(operation: string) {
  const j = recorded(home, operation).data;
  const armored = Buffer.from(j.commit.ciphertext.slice(2), 'hex').toString('utf8');
  const state = await sb.control('/__sandbox/state');
  const plain = await tlockDecrypt(
    await network(),
    armored,
    async (r) => (await api(sb.info.baseUrl, 'GET', `/drand/${sb.info.drand.chainHash}/public/${r}`)).body,
    state.now - Math.floor(Date.now() / 1000),
  );
  return { plain: decodeVotePlaintext(plain), journal: j };
}

beforeAll(async () => {
  // Many rating runs a minute: the spec's MCP rate limit (120 a minute) is for one agent, not a test suite.
  ({ sb, home, pub } = await openSession({ rateLimits: { mcp: 10_000 } }));
});
afterAll(async () => {
  await sb.stop();
  // The database holds the vote secrets, but never the wallet key or password, and is private.
  for (const f of filesUnder(`${home.dir}/state`)) expect(findSecret(readFileSync(f, 'latin1')), f).toBeUndefined();
  expect(statSync(storeFile(home)).mode & 0o777).toBe(0o600);
});

describe('rating through to a revealed vote', () => {
  it('a staked vote: committed, revealed by the keeper with the committed direction and prediction', async () => {
    const id = await newContent();
    const before = await lrep();
    const r = await run(['--json', 'rate', '--content-id', id, '--up', '--prediction', '70', '--stake', '2']);
    expect(r.code, r.stderr).toBe(0);
    const doc = r.json();
    expect(doc).toMatchObject({ roundId: '1', stakeWei: '2000000', advisory: false });
    expect(r.stderr).not.toMatch(/"isUp"|"salt"|"predictedUpBps"/);
    expect(await lrep()).toBe(before - 2_000_000n);
    await passTime();
    const stored = await storedCommit(pub, sb.info.contracts.roundVotingEngine, BigInt(id), 1n, doc.commitKey);
    expect(stored).toMatchObject({ revealed: true, isUp: true, predictedUpBps: 7000 });
    const status = await run(['--json', 'rate', 'status', '--content-id', id]);
    expect(status.json().status).toBe('revealed');
    const journal = recorded(home, doc.operation).data;
    expect(journal.commit.secret).toMatchObject({ isUp: true, predictedUpBps: 7000 });
    expect(journal.commit.secret.salt).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('an advisory vote (stake 0): recorded, and it decrypts to what was committed', async () => {
    const id = await newContent();
    const before = await lrep();
    const r = await run(['--json', 'rate', '--content-id', id, '--down', '--prediction', '35', '--stake', '0']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ advisory: true, transactions: 1 });
    await expectNothingStaked(before);
    await passTime();
    expect((await run(['--json', 'rate', 'status', '--content-id', id])).json().status).toBe('revealed');
    const { plain, journal } = await decryptJournal(r.json().operation);
    expect(plain).toEqual({ isUp: false, predictedUpBps: 3500, salt: journal.commit.secret.salt });
  });

  it('a vote that first opens the round (the previous round settled)', async () => {
    const id = await newContent({ durationSeconds: 60 });
    await passTime(700);
    const r = await run(['--json', 'rate', '--content-id', id, '--up', '--prediction', '55', '--stake', '1']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().roundId).toBe('2');
    expect(r.stderr).toMatch(/opening it/);
  });

  it('a vote journaled in an earlier round is never overwritten: voting again needs --new-round, is a new operation, and `rate status` lists both', async () => {
    const id = await newContent({ durationSeconds: 60 });
    const first = await run(['--json', 'rate', '--content-id', id, '--up', '--prediction', '65', '--stake', '1']);
    expect(first.code, first.stderr).toBe(0);
    const kept = recorded(home, first.json().operation).data.commit;
    await passTime(700); // round 1 settles
    const before = await lrep();
    const again = await run(['--json', 'rate', '--content-id', id, '--down', '--prediction', '30', '--stake', '2']);
    expect(again.code, again.stdout).toBe(2);
    expect(again.json().error).toMatchObject({ code: 'voted_in_earlier_round' });
    expect(again.json().error.hint).toMatch(/--new-round/);
    await expectNothingStaked(before);
    expect(recorded(home, first.json().operation).data.commit, 'the round 1 vote, salt and all, is as it was').toEqual(kept);
    // The engine's 24 h cooldown per voter per question (live): a new round's vote waits until it is over (the
    // refusal before it is the next describe's CooldownActive test).
    await passTime(24 * 3600);
    const second = await run(['--json', 'rate', '--content-id', id, '--down', '--prediction', '30', '--stake', '2', '--new-round']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.json()).toMatchObject({ roundId: '2' });
    expect(second.json().operation).not.toBe(first.json().operation);
    expect(recorded(home, first.json().operation).data.commit).toEqual(kept);
    expect(recorded(home, second.json().operation).data.previous).toBe(first.json().operation);
    // A rerun of the new vote resumes it (the latest), and sends nothing.
    const rerun = await run(['--json', 'rate', '--content-id', id, '--down', '--prediction', '30', '--stake', '2']);
    expect(rerun.json()).toMatchObject({ resumed: true, operation: second.json().operation, transactions: 0 });
    const status = await run(['--json', 'rate', 'status', '--content-id', id]);
    expect(status.code, status.stderr).toBe(0);
    expect(
      status.json().votes.map((v: { roundId: string; operation: string; state: string }) => [v.roundId, v.operation, v.state]),
    ).toEqual([
      ['1', first.json().operation, 'committed'],
      ['2', second.json().operation, 'committed'],
    ]);
    expect(JSON.stringify(status.json())).not.toMatch(/salt/);
  });

  it('a round closed to votes but not settled yet: exit 4 naming the reason (not a bare custom error), nothing paid', async () => {
    // The raters commit, nobody reveals: the round ends with its commits unrevealed, neither cancellable (it has its
    // commits) nor failed (the reveal grace runs an hour), so the engine opens no new round (RoundNotOpen, as live).
    await sb.control('/__sandbox/settings', { reveals: false });
    onTestFinished(() => sb.control('/__sandbox/settings', { reveals: true }));
    const id = await newContent({ durationSeconds: 60 });
    await passTime(120);
    const before = await lrep();
    const r = await run(['--json', 'rate', '--content-id', id, '--up', '--prediction', '55', '--stake', '1']);
    expect(r.code, r.stdout).toBe(4);
    expect(r.json().error).toMatchObject({ code: 'call_would_revert' });
    expect(r.json().error.message).toMatch(/would revert: RoundNotOpen: the question has no round open for votes now/);
    await expectNothingStaked(before);
  });

  it('a vote on gated content: the full terms shown and saved, accepted with --yes (terms guard), context fetched and verified', async () => {
    const created = await sb.control('/__sandbox/content', { gated: true, details: 'Release 42 is confidential.' });
    const id = String(created.contentId);
    const liveText: string = readVector('live/terms.json').cases[0].terms.text;
    // Without --yes: nothing is signed; the whole text is saved (0600) and named, with its hash, in the error.
    const refused = await run(['--json', 'rate', '--content-id', id, '--up', '--prediction', '60', '--stake', '2']);
    expect(refused.code).toBe(2);
    const err = refused.json().error;
    expect(err.code).toBe('terms_not_accepted');
    expect(readFileSync(err.termsFile, 'utf8')).toBe(liveText);
    expect((statSync(err.termsFile).mode & 0o777).toString(8)).toBe('600');
    expect(err.termsSha256).toBe(createHash('sha256').update(liveText).digest('hex'));
    expect(err).toMatchObject({ termsVersion: '2026-06-confidential-context-full', termsUri: '/confidential-context/terms' });
    expect(refused.stderr).toContain(`"termsFile":"${err.termsFile}"`);
    // In human mode the whole text is printed before the refusal.
    const human = await run(['rate', '--content-id', id, '--up', '--prediction', '60', '--stake', '2']);
    expect(human.code).toBe(2);
    for (const l of liveText.split('\n')) expect(human.stderr).toContain(l);
    expect(human.stderr.indexOf('7. Versioning')).toBeLessThan(human.stderr.indexOf('error: '));
    const advisory = await run(['--json', 'rate', '--content-id', id, '--up', '--prediction', '60', '--stake', '0', '--yes']);
    expect(advisory.code).toBe(2);
    expect(advisory.json().error.code).toBe('advisory_on_gated');
    const r = await run(['--json', 'rate', '--content-id', id, '--down', '--prediction', '40', '--stake', '2', '--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().gated).toBe(true);
    expect(r.stderr).toMatch(/"event":"rate\.terms"/);
    expect(r.json().gatedContext).toEqual([
      expect.objectContaining({
        kind: 'details',
        verified: true,
        untrusted: true,
        sha256: created.details.sha256,
        text: 'Release 42 is confidential.',
      }),
    ]);
    expect(r.json().terms).toMatchObject({ file: err.termsFile, sha256: err.termsSha256, version: '2026-06-confidential-context-full' });
    // Run again after success: the same vote is reported; nothing is signed or paid, not even the terms again.
    const stake = await lrep();
    const again = await run(['--json', 'rate', '--content-id', id, '--down', '--prediction', '40', '--stake', '2', '--yes']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.json()).toMatchObject({ resumed: true, commitHash: r.json().commitHash, transactions: 0 });
    expect(again.stderr).not.toMatch(/"event":"rate\.terms"/);
    expect(await lrep()).toBe(stake);
    await passTime();
    const { plain } = await decryptJournal(r.json().operation);
    expect(plain).toMatchObject({ isUp: false, predictedUpBps: 4000 });
  });

  it('`rate reveal` reveals from the journal when the keeper has not', async () => {
    await sb.control('/__sandbox/settings', { reveals: false });
    const id = await newContent();
    const r = await run(['--json', 'rate', '--content-id', id, '--down', '--prediction', '20', '--stake', '3']);
    expect(r.code, r.stderr).toBe(0);
    await sb.control('/__sandbox/time', { advanceSeconds: 1300 });
    const reveal = await run(['--json', 'rate', 'reveal', '--content-id', id]);
    await sb.control('/__sandbox/settings', { reveals: true });
    expect(reveal.code, reveal.stderr).toBe(0);
    expect(reveal.json().revealedBy).toBe('loopsign');
    const stored = await storedCommit(pub, sb.info.contracts.roundVotingEngine, BigInt(id), 1n, r.json().commitKey);
    expect(stored).toMatchObject({ revealed: true, isUp: false, predictedUpBps: 2000 });
  });
});

/**
 * A node in front of the sandbox's, an epoch ahead of it: its latest block's clock, and the commit it simulates (it
 * accepts it). A commit built through it targets a drand round of the next epoch's window, which the round does not
 * accept on a rerun through the sandbox itself: as when a target round lapsed (the sandbox's rounds are one epoch long,
 * so none can lapse while it is open).
 */
async function epochAheadNode() {
  const commitSelector = toFunctionSelector('commitVote(uint256,uint256,uint64,bytes32,bytes32,bytes,uint256,address)');
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const asked = JSON.parse(body) as { id: number; method: string; params?: { data?: string }[] | string[] };
    const reply = (text: string) => res.writeHead(200, { 'content-type': 'application/json' }).end(text);
    const first = asked.params?.[0];
    if (asked.method === 'eth_call' && typeof first === 'object' && first.data?.startsWith(commitSelector))
      return reply(JSON.stringify({ jsonrpc: '2.0', id: asked.id, result: '0x' }));
    const answer = (await (
      await fetch(sb.info.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    ).json()) as { result?: { timestamp?: Hex } };
    if (asked.method === 'eth_getBlockByNumber' && first === 'latest' && answer.result?.timestamp)
      answer.result.timestamp = toHex(BigInt(answer.result.timestamp) + 1300n);
    reply(JSON.stringify(answer));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return server;
}

describe('a vote is never approved twice', () => {
  const allowance = async () =>
    (await pub.readContract({
      address: sb.info.tokens.LREP.address,
      abi: engineAbi,
      functionName: 'allowance',
      args: [sb.info.devWallet.address, sb.info.contracts.roundVotingEngine],
    })) as bigint;
  const nonce = () => pub.getTransactionCount({ address: sb.info.devWallet.address });

  /** A wallet of its own, funded, with no allowance to the engine: a fresh plan approves its stake. */
  const freshWallet = () => fundedWallet(sb, pub);

  it('a vote already cast from another loopsign home of the same wallet: refused before anything is signed (CooldownActive, exit 4), no second approval', async () => {
    const id = await newContent();
    const args = ['--json', 'rate', '--content-id', id, '--up', '--prediction', '70', '--stake', '2'];
    const first = await run(args);
    expect(first.code, first.stderr).toBe(0);
    // The same wallet, another journal (another machine, or a home set aside): a fresh plan, its approval first. The
    // engine refuses the commit; before, the approval was signed, sent and mined, and only the commit's own
    // simulation said no. (A journal met again with --set-aside-stale came here too, before b428ccf kept a journal
    // whose transactions are on this chain.)
    const other = makeHome();
    const [n0, a0, before] = [await nonce(), await allowance(), await lrep()];
    const again = await runCli(args, other, { env: sb.env() });
    expect(again.code, again.stdout + again.stderr).toBe(4);
    expect(again.json().error).toMatchObject({ code: 'call_would_revert' });
    // The live engine checks its 24 h cooldown before the duplicate commit, so that is the reason it gives.
    expect(again.json().error.message).toMatch(/CooldownActive/);
    // Nothing signed or sent: no approval the user never asked for, and none counted by the policy.
    expect(recorded(other, first.json().operation).txs, 'the other journal signed nothing').toEqual([]);
    expect(await nonce()).toBe(n0);
    expect(await allowance()).toBe(a0);
    await expectNothingStaked(before);
  });

  it('a vote rebuilt because its drand target round lapsed: the approval it had signed (never sent) is neither signed again nor counted twice by the policy', async () => {
    // A policy whose 24-hour window holds one 3 LREP vote, not two stakes. (3 LREP: above any allowance left to the
    // engine by the votes before, so the plan approves its stake.)
    const policyHome = makeHome();
    mkdirSync(path.join(policyHome.env.XDG_CONFIG_HOME, 'loopsign'), { recursive: true });
    writeFileSync(
      path.join(policyHome.env.XDG_CONFIG_HOME, 'loopsign', 'policy.json'),
      JSON.stringify({ version: 1, rolling24h: { '31337': { maxLrep: '5000000' } } }),
    );
    const id = await newContent();
    const args = ['--json', 'rate', '--content-id', id, '--up', '--prediction', '70', '--stake', '3'];
    // The first run goes through a node an epoch ahead of the chain (epochAheadNode), so its commit's target round
    // has lapsed for the rerun. That run is killed once its approval is signed, before the broadcast.
    const server = await epochAheadNode();
    const ahead = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    let killed: Awaited<ReturnType<typeof runCli>>;
    try {
      killed = await runCli([...args, '--rpc-url', ahead], policyHome, {
        env: { ...sb.env(), LOOPSIGN_CRASH_AFTER: 'rate:1:signed:0' },
      });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
    expect(killed.code, killed.stdout + killed.stderr).toBe(-1);
    const [op] = recordedOfKind(policyHome, 'rate');
    expect(op!.txs.map((t) => [t.stage, t.status])).toEqual([['rate:1', 'signed']]);
    const [n0, before] = [await nonce(), await lrep()];
    const rerun = await runCli(args, policyHome, { env: sb.env() });
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    expect(rerun.stderr).toMatch(/"event":"rate\.rebuild"/);
    expect(before - (await lrep()), 'one stake').toBe(3_000_000n);
    const txs = recorded(policyHome, op!.id).txs;
    expect(await nonce(), 'one approval and one commit in all').toBe(n0 + 2);
    expect(
      txs.filter((t) => t.status === 'signed'),
      'nothing left signed that can no longer be mined',
    ).toEqual([]);
    expect(txs.length, 'one approval and one commit signed').toBe(2);
    // What the policy counts for this vote: its stake, once.
    const used = withStore(policyHome, (db) =>
      db.prepare("SELECT SUM(amount) AS used FROM usage WHERE operation_id = ? AND asset = 'LREP'").safeIntegers(true).get(op!.id),
    ) as { used: bigint };
    expect(used.used).toBe(3_000_000n);
  });

  it("a replaced commit's approval (signed, never sent) whose nonce software outside loopsign took: the vote waits for that to be final, then goes on, the approval void, the stake paid once", async () => {
    // A wallet of its own, so that its key can send a transaction outside loopsign.
    const { account, env, lrepOf } = await freshWallet();
    const other = makeHome();
    const id = await newContent();
    const args = ['--json', 'rate', '--content-id', id, '--up', '--prediction', '70', '--stake', '3'];
    // As in the case above: a node an epoch ahead, the run killed once its approval is signed, before the broadcast.
    const server = await epochAheadNode();
    let killed: Awaited<ReturnType<typeof runCli>>;
    try {
      killed = await runCli([...args, '--rpc-url', `http://127.0.0.1:${(server.address() as AddressInfo).port}`], other, {
        env: { ...env, LOOPSIGN_CRASH_AFTER: 'rate:1:signed:0' },
      });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
    expect(killed.code, killed.stdout + killed.stderr).toBe(-1);
    const [op] = recordedOfKind(other, 'rate');
    expect(op!.txs.map((t) => [t.stage, t.status, t.nonce])).toEqual([['rate:1', 'signed', 0]]);
    // Software outside loopsign sends from the wallet with that nonce.
    const outside = createWalletClient({ account, transport: http(sb.info.rpcUrl) });
    await pub.waitForTransactionReceipt({ hash: await outside.sendTransaction({ chain: null, to: account.address, value: 0n }) });
    const before = await lrepOf();
    // Before, every rerun stopped at that approval (nonce_used_elsewhere, "ask again with a new clientRequestId", which
    // a vote does not have): the vote could never be cast in this round. Now it stops only until the taker is final.
    const early = await runCli(args, other, { env });
    expect(early.code, early.stdout + early.stderr).toBe(4);
    expect(early.json().error.code).toBe('nonce_not_final');
    expect(await lrepOf()).toBe(before);
    for (let i = 0; i < 2; i++) await pub.request({ method: 'evm_mine' as never, params: [] as never });
    for (const attempt of [1, 2]) {
      const rerun = await runCli(args, other, { env });
      expect(rerun.code, `rerun ${attempt}: ${rerun.stdout}${rerun.stderr}`).toBe(0);
      expect(before - (await lrepOf()), `rerun ${attempt}: one stake`).toBe(3_000_000n);
    }
    const txs = recorded(other, op!.id).txs;
    // The old approval is void (its nonce used in the finalized chain by the outside transaction): it counts no more.
    expect(txs.find((t) => t.nonce === 0)?.status).toBe('dropped');
    expect(txs.filter((t) => t.stage === 'rate:1').map((t) => t.status)).toEqual(['mined', 'mined']);
  });
  it("a node that drops a revert's data: the commit's first simulation cannot tell the allowance shortfall from a refusal, and an honest vote is not refused for ever", async () => {
    const { env, lrepOf } = await freshWallet();
    const id = await newContent();
    const args = ['--json', 'rate', '--content-id', id, '--up', '--prediction', '70', '--stake', '2'];
    // A proxy that answers eth_call's errors without their data field (the selector of ERC20InsufficientAllowance).
    const server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      const asked = JSON.parse(body) as { method: string };
      const answer = (await (
        await fetch(sb.info.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      ).json()) as { error?: { data?: unknown } };
      if (asked.method === 'eth_call' && answer.error) delete answer.error.data;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const before = await lrepOf();
    try {
      const r = await runCli([...args, '--rpc-url', `http://127.0.0.1:${(server.address() as AddressInfo).port}`], makeHome(), { env });
      // Before, every run stopped here: call_would_revert, nothing signed, whatever the vote.
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stderr).toMatch(/first simulation reverted without saying why/);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
    expect(before - (await lrepOf()), 'one stake').toBe(2_000_000n);
  });
});

describe('rate commit --offline', () => {
  it('builds the interface output with no network, reproducibly from --salt, and it decrypts with the sandbox beacon', async () => {
    const runtime = {
      roundId: '1',
      roundReferenceRatingBps: '5000',
      epochDuration: '1200',
      drandChainHash: `0x${sb.info.drand.chainHash}`,
      drandGenesisTimeSeconds: String(sb.info.drand.genesis),
      drandPeriodSeconds: String(sb.info.drand.period),
      roundStartTimeSeconds: String((await sb.control('/__sandbox/state')).now),
      targetRound: null,
    };
    const file = home.file('runtime.json', JSON.stringify({ runtime }));
    const voter = `0x${'22'.repeat(20)}`;
    const salt = `0x${'22'.repeat(32)}`;
    // A dead base URL and RPC: nothing may be contacted.
    const r = await runCli(
      [
        '--json',
        '--base-url',
        'http://127.0.0.1:9',
        '--rpc-url',
        'http://127.0.0.1:9',
        'rate',
        'commit',
        '--offline',
        '--runtime',
        file,
        '--voter',
        voter,
        '--content-id',
        '42',
        '--up',
        '--prediction',
        '69',
        '--stake',
        '2.5',
        '--salt',
        salt,
      ],
      home,
      { env: sb.env() },
    );
    expect(r.code, r.stderr).toBe(0);
    const out = r.json();
    expect(Object.keys(out).sort()).toEqual([
      'ciphertext',
      'commitHash',
      'drandChainHash',
      'frontend',
      'ok',
      'roundId',
      'roundReferenceRatingBps',
      'stakeAtomicUnits',
      'stakeWei',
      'targetRound',
    ]);
    expect(out).toMatchObject({
      stakeWei: '2500000',
      stakeAtomicUnits: '2500000',
      roundId: '1',
      frontend: '0x0000000000000000000000000000000000000000',
    });
    expect(out.commitHash).toBe(
      commitHash({
        isUp: true,
        predictedUpBps: 6900,
        salt: salt as Hex,
        voter: voter as Hex,
        contentId: 42n,
        roundId: 1n,
        roundReferenceRatingBps: 5000,
        targetRound: BigInt(out.targetRound),
        drandChainHash: out.drandChainHash,
        ciphertext: out.ciphertext,
      }),
    );
    await sb.control('/__sandbox/time', { advanceSeconds: 1300 });
    const state = await sb.control('/__sandbox/state');
    const plain = await tlockDecrypt(
      await network(),
      Buffer.from(out.ciphertext.slice(2), 'hex').toString('utf8'),
      async (n) => (await api(sb.info.baseUrl, 'GET', `/drand/${sb.info.drand.chainHash}/public/${n}`)).body,
      state.now - Math.floor(Date.now() / 1000),
    );
    expect(decodeVotePlaintext(plain)).toEqual({ isUp: true, predictedUpBps: 6900, salt });
  });

  it.each([
    ['a stake above 10 LREP', ['--stake', '11'], /between 1 and 10 LREP/],
    ['more than six decimals', ['--stake', '1.0000004'], /more than 6 decimal places/],
    ['a prediction of 100', ['--prediction', '100'], /^--prediction 100 is outside/],
    ['both directions', ['--down'], /--up or --down, not both/],
  ])('refuses %s with exit 2', async (_n, extra, message) => {
    const base = [
      '--json',
      'rate',
      'commit',
      '--offline',
      '--runtime',
      home.file('rt.json', '{}'),
      '--voter',
      `0x${'22'.repeat(20)}`,
      '--content-id',
      '1',
      '--up',
      '--prediction',
      '50',
      '--stake',
      '2',
    ];
    const args = [...base];
    for (let i = 0; i < extra.length; i++) {
      const k = args.indexOf(extra[i]!);
      if (k >= 0 && extra[i + 1] !== undefined && extra[i]!.startsWith('--') && !extra[i + 1]!.startsWith('--')) args[k + 1] = extra[++i]!;
      else args.push(extra[i]!);
    }
    const r = await runCli(args, home, { env: sb.env() });
    expect(r.code).toBe(2);
    expect(r.json().error.message).toMatch(message);
  });
});

describe('hostile rating plans and messages are refused with exit 5, and nothing moves', () => {
  it.each(['rate_swapped_commit_hash', 'rate_swapped_ciphertext', 'rate_inflated_approval', 'rate_wrong_engine'])(
    '%s',
    async (scenario) => {
      const id = await newContent();
      await sb.control('/__sandbox/hostile', { scenario, count: 3 });
      const before = await lrep();
      const n0 = await pub.getTransactionCount({ address: sb.info.devWallet.address });
      const r = await run(['--json', 'rate', '--content-id', id, '--up', '--prediction', '70', '--stake', '2']);
      await sb.control('/__sandbox/hostile', undefined, 'DELETE');
      expect(r.code, r.stdout).toBe(5);
      expect(r.json().error.code).toBe('plan_refused');
      await expectNothingStaked(before);
      expect(await pub.getTransactionCount({ address: sb.info.devWallet.address })).toBe(n0);
      capture.count('hostile scenarios refused with exit 5', scenario);
    },
  );

  it('an open-round plan for another question', async () => {
    const id = await newContent({ durationSeconds: 60 });
    await passTime(700);
    await sb.control('/__sandbox/hostile', { scenario: 'rate_open_round_wrong_content', count: 3 });
    const r = await run(['--json', 'rate', '--content-id', id, '--up', '--prediction', '70', '--stake', '2']);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(r.code).toBe(5);
    expect(r.json().error.message).toMatch(/opens the round of question/);
    capture.count('hostile scenarios refused with exit 5', 'rate_open_round_wrong_content');
  });

  it.each([
    'terms_wrong_wallet',
    'terms_wrong_action',
    'terms_far_expiry',
    'terms_typed_data',
    'terms_raw_hex',
    'terms_extra_line',
    'terms_changed_text',
  ])('%s', async (scenario) => {
    const id = String((await sb.control('/__sandbox/content', { gated: true })).contentId);
    await sb.control('/__sandbox/hostile', { scenario, count: 3 });
    const r = await run(['--json', 'rate', '--content-id', id, '--up', '--prediction', '70', '--stake', '2', '--yes']);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(r.code, r.stdout).toBe(5);
    expect(r.json().error.code).toBe('message_refused');
    capture.count('hostile scenarios refused with exit 5', scenario);
  });

  // Gated reads go to the service's origin only, are never redirected and never read past their cap; nothing of the
  // body is printed and no vote is sent. Another origin or a redirect is a refusal (5); a body without end is the
  // service's fault (3).
  it.each([
    ['gated_other_origin', 5, 'gated_url_refused', 0],
    ['gated_redirect_other_origin', 5, 'gated_redirect_refused', 1],
    ['gated_redirect_internal', 5, 'gated_redirect_refused', 1],
    ['gated_oversized', 3, 'response_too_large', 1],
  ] as const)('%s: exit %i (%s), nothing of the body printed, nothing paid', async (scenario, code, errorCode, readsPerRun) => {
    const id = String((await sb.control('/__sandbox/content', { gated: true, details: `SECRET-DETAILS-${scenario}` })).contentId);
    const readsBefore = (await sb.control('/__sandbox/state')).gatedReads.length;
    await sb.control('/__sandbox/hostile', { scenario, count: 5 });
    const before = await lrep();
    const n0 = await pub.getTransactionCount({ address: sb.info.devWallet.address });
    const r = await run(['--json', 'rate', '--content-id', id, '--up', '--prediction', '70', '--stake', '2', '--yes']);
    const human = await run(['rate', '--content-id', id, '--up', '--prediction', '70', '--stake', '2', '--yes']);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(r.code, r.stdout + r.stderr).toBe(code);
    expect(r.json().error.code).toBe(errorCode);
    expect(human.code, human.stderr).toBe(code);
    // A URL off the service's origin is refused before the terms are even signed.
    if (scenario === 'gated_other_origin') expect(r.stderr).not.toMatch(/"event":"rate\.terms"/);
    else expect(r.stderr).toMatch(/"event":"rate\.terms"/);
    for (const out of [r.stdout, r.stderr, human.stdout, human.stderr])
      expect(out).not.toMatch(/SECRET-DETAILS|REDIRECT-BODY|OVERSIZED-BODY/);
    // Only the service's own origin was ever read (never localhost, the "other" origin): once per run at most.
    const reads = (await sb.control('/__sandbox/state')).gatedReads.slice(readsBefore);
    expect(reads).toEqual(Array.from({ length: 2 * readsPerRun }, () => ({ host: expect.stringMatching(/^127\.0\.0\.1:/), cookie: true })));
    await expectNothingStaked(before);
    expect(await pub.getTransactionCount({ address: sb.info.devWallet.address })).toBe(n0);
    capture.count(`hostile scenarios refused with exit ${code}`, scenario);
  });

  it('covers every rating scenario the sandbox offers', async () => {
    const offered = (await sb.control('/__sandbox/hostile')).scenarios
      .filter((s: { flow: string }) => s.flow === 'rate')
      .map((s: { name: string }) => s.name);
    expect(offered.sort()).toEqual(
      [
        'rate_swapped_commit_hash',
        'rate_swapped_ciphertext',
        'rate_inflated_approval',
        'rate_wrong_engine',
        'rate_open_round_wrong_content',
        'terms_wrong_wallet',
        'terms_wrong_action',
        'terms_far_expiry',
        'terms_typed_data',
        'terms_raw_hex',
        'terms_extra_line',
        'terms_changed_text',
        'gated_other_origin',
        'gated_redirect_other_origin',
        'gated_redirect_internal',
        'gated_oversized',
      ].sort(),
    );
  });
});
