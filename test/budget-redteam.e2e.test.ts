// Red team on the agent budget (issue 38), end to end on the sandbox with MetaMask's contracts: a second process of the
// same agent wallet S racing a run whose pull reached the chain before its journal said so, a grant re-imported with
// other caps under a run killed after its pull, and what a self-authorized redemption (an empty permission context)
// moves from an owner's account. Every assertion reads the chain (O's transfers to S, balances).
import { DELEGATION_CHAIN } from '../src/budget/pull-call.js';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { createWalletClient, encodeAbiParameters, formatEther, encodeFunctionData, encodePacked, http, parseAbi, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { openSession, type Session } from './helpers/chain.js';
import Database from 'better-sqlite3';
import { recordedOfKind, storeFile } from './helpers/store.js';
import { agentWithGrant as grantTo, budgetAsk, budgetOwner, transfers, usdcOf, USDC, type Agent, type Owner } from './helpers/budget.js';

let s: Session;
let owner: Owner;
let contracts: Record<string, Hex>;

beforeAll(async () => {
  s = await openSession({ raters: false });
  owner = await budgetOwner(s, 200n * USDC);
  contracts = JSON.parse(readFileSync(path.join(s.sb.stateDir, 'manifest.json'), 'utf8')).delegation.contracts;
});
afterAll(async () => {
  await s.sb.stop();
});

const balance = (who: Hex) => usdcOf(s, who);
const pulledTo = (to: Hex) => transfers(s, owner.address, to);
const askFile = (bounty: string) => budgetAsk(s, bounty).file;
const ask = (agent: Agent, file: string, env: Record<string, string> = {}) =>
  runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'], s.home, { env: { ...agent.env, ...env } });

/** The journaled pull of the one ask operation of `agent` whose request is `file`'s. */
function journaledPull(agent: Agent) {
  const ops = recordedOfKind(s.home, 'ask').filter((o) => o.txs.some((t) => t.stage === 'ask_pull'));
  const mine = ops.filter((o) => JSON.stringify(o).toLowerCase().includes(agent.address.slice(2).toLowerCase()));
  const tx = mine.flatMap((o) => o.txs).find((t) => t.stage === 'ask_pull');
  if (!tx) throw new Error('no journaled pull');
  return tx;
}

describe('red team: the agent budget', () => {
  // First in the file: the policy's rolling window counts every ask of this home on the chain.
  it('RED TEAM: two asks of S at once under a policy with room for one: the one the policy refuses pulls nothing from O', async () => {
    const agent = await grantTo(s, owner, '10', '50');
    const policy = s.home.file('policy-one-ask.json', JSON.stringify({ version: 1, rolling24h: { '31337': { maxUsdc: '2000000' } } }));
    const env = { LOOPSIGN_POLICY: policy };
    // Both pass the policy's preflight (nothing is signed yet); one takes the wallet's claim, pulls and pays first.
    const [a, b] = await Promise.all([ask(agent, askFile('1.5'), env), ask(agent, askFile('1.5'), env)]);
    const codes = [a.code, b.code].sort();
    expect(codes, a.stdout + a.stderr + b.stdout + b.stderr).toEqual([0, 5]);
    const refused = (a.code === 5 ? a : b).json().error;
    expect(refused.code).toBe('policy_limit');
    // O gave exactly what the one paid ask paid: nothing sits on S for an ask the policy never let pay.
    const pulled = await pulledTo(agent.address);
    expect(pulled.total).toBe(1_500_000n);
    expect(await balance(agent.address)).toBe(0n);
  });

  it('RED TEAM: a pull on chain but journaled signed (killed after the broadcast) is not spent by a second ask of S: each ask pulls its own and pays once', async () => {
    const agent = await grantTo(s, owner, '10', '50');
    const fileA = askFile('1.5');
    // Run A is killed once its pull is signed and journaled; the node had the bytes (a kill after eth_sendRawTransaction
    // and before the receipt was recorded): here the test hands them to the node, as the node would have kept them.
    const killed = await ask(agent, fileA, { LOOPSIGN_CRASH_AFTER: 'ask_pull:signed:0' });
    expect(killed.code, killed.stderr).toBe(-1);
    const pull = journaledPull(agent);
    expect(pull.status).toBe('signed');
    const hash = await s.pub.request({ method: 'eth_sendRawTransaction', params: [pull.raw] });
    expect((await s.pub.waitForTransactionReceipt({ hash, pollingInterval: 50 })).status).toBe('success');
    expect(await balance(agent.address)).toBe(1_500_000n);

    // A second ask of S (another process, after A died): A's pulled 1.5 USDC are A's, not free.
    const b = await ask(agent, askFile('1.5'));
    expect(b.code, b.stdout + b.stderr).toBe(0);
    // A, run again, finds its pull on chain and pays with it.
    const again = await ask(agent, fileA);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.json().status).toBe('submitted');
    const pulled = await pulledTo(agent.address);
    expect([pulled.total, pulled.count]).toEqual([3_000_000n, 2]);
    expect(await balance(agent.address)).toBe(0n);
  });

  it('RED TEAM: a grant re-imported with other caps after a run was killed past its mined pull: the rerun pays with that pull, pulls nothing more', async () => {
    const agent = await grantTo(s, owner, '10', '50');
    const file = askFile('1.5');
    const killed = await ask(agent, file, { LOOPSIGN_CRASH_AFTER: 'ask_pull:mined:0' });
    expect(killed.code, killed.stderr).toBe(-1);
    expect((await pulledTo(agent.address)).total).toBe(1_500_000n);
    // The owner grants S again with other caps; S imports the new grant (the newest one is the one it pulls from).
    const grantFile = path.join(s.home.dir, `grant2-${agent.address}.json`);
    const granted = await runCli(
      [
        '--json',
        'budget',
        'grant',
        '--to',
        agent.address,
        '--usdc-per-day',
        '5',
        '--usdc-per-30-days',
        '20',
        '--expires',
        '7d',
        '--out',
        grantFile,
        '--yes',
      ],
      s.home,
      { env: owner.env },
    );
    expect(granted.code, granted.stdout + granted.stderr).toBe(0);
    const imported = await runCli(['--json', 'budget', 'import', grantFile], s.home, { env: agent.env });
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);

    const again = await ask(agent, file);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.json().status).toBe('submitted');
    const pulled = await pulledTo(agent.address);
    expect([pulled.total, pulled.count]).toEqual([1_500_000n, 1]);
    expect(await balance(agent.address)).toBe(0n);
  });

  it('RED TEAM: a hostile service’s x402 request (an inflated authorization) is refused before the pull: O’s money does not move for it', async () => {
    const agent = await grantTo(s, owner, '10', '50');
    await s.sb.control('/__sandbox/hostile', { scenario: 'x402_inflated_value', count: 1 });
    try {
      const r = await runCli(['--json', 'ask', '--file', askFile('1.5'), '--payment-mode', 'x402_authorization'], s.home, {
        env: agent.env,
      });
      expect(r.code, r.stdout + r.stderr).toBe(5);
    } finally {
      await s.sb.control('/__sandbox/hostile', undefined, 'DELETE');
    }
    expect((await pulledTo(agent.address)).total).toBe(0n);
    expect(await balance(agent.address)).toBe(0n);
  });

  it('held: killed past its mined pull (ordered), run again with --atomic: the pull is reused, pays once', async () => {
    const agent = await grantTo(s, owner, '10', '50');
    const file = askFile('1.5');
    const killed = await ask(agent, file, { LOOPSIGN_CRASH_AFTER: 'ask_pull:mined:0' });
    expect(killed.code, killed.stderr).toBe(-1);
    const again = await runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', '--atomic'], s.home, { env: agent.env });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.json().status).toBe('submitted');
    const pulled = await pulledTo(agent.address);
    expect([pulled.total, pulled.count]).toEqual([1_500_000n, 1]);
    expect(await balance(agent.address)).toBe(0n);
  });

  it('held: --atomic killed with its batch (pull, approve, submit) signed, run again without --atomic: the batch’s bytes go out, pulls once', async () => {
    const agent = await grantTo(s, owner, '10', '50');
    const file = askFile('1.5');
    const killed = await runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', '--atomic'], s.home, {
      env: { ...agent.env, LOOPSIGN_CRASH_AFTER: 'ask:signed:1,2,3' },
    });
    expect(killed.code, killed.stdout + killed.stderr).toBe(-1);
    const again = await ask(agent, file);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    const pulled = await pulledTo(agent.address);
    expect([pulled.total, pulled.count]).toEqual([1_500_000n, 1]);
    expect(await balance(agent.address)).toBe(0n);
  });

  it('held: the grant revoked after a run’s pull was mined: the rerun pays with what it pulled, signs no new pull', async () => {
    const agent = await grantTo(s, owner, '10', '50');
    const file = askFile('1.5');
    const killed = await ask(agent, file, { LOOPSIGN_CRASH_AFTER: 'ask_pull:mined:0' });
    expect(killed.code, killed.stderr).toBe(-1);
    const revoked = await runCli(['--json', 'budget', 'revoke', '--grant', agent.grantFile, '--yes'], s.home, { env: owner.env });
    expect(revoked.code, revoked.stdout + revoked.stderr).toBe(0);
    const again = await ask(agent, file);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    const pulled = await pulledTo(agent.address);
    expect([pulled.total, pulled.count]).toEqual([1_500_000n, 1]);
    expect(await balance(agent.address)).toBe(0n);
    // A new ask of S is refused on the revoked grant, before anything is signed.
    const next = await ask(agent, askFile('1'));
    expect(next.code, next.stdout + next.stderr).toBe(5);
    expect(next.json().error.code).toBe('budget_revoked');
  });

  it('held: the owner holds less USDC than the pull: refused before anything is signed, and the same ask pays once the owner is funded', async () => {
    const poor = await budgetOwner(s, 0n);
    const agent = await grantTo(s, poor, '10', '50');
    // The owner keeps 1 USDC (the rest moved away by its own hand).
    const poorWallet = createWalletClient({ account: privateKeyToAccount(poor.key), transport: http(s.sb.info.rpcUrl) });
    const spent = await poorWallet.writeContract({
      chain: null,
      address: s.sb.info.tokens.USDC.address,
      abi: parseAbi(['function transfer(address, uint256) returns (bool)']),
      functionName: 'transfer',
      args: [`0x${'5'.repeat(40)}`, (await balance(poor.address)) - 1n * USDC],
    });
    expect((await s.pub.waitForTransactionReceipt({ hash: spent, pollingInterval: 50 })).status).toBe('success');
    const file = askFile('1.5');
    const refused = await ask(agent, file);
    // The pull's simulation fails (the owner's ERC20InsufficientBalance): exit 4, nothing sent.
    expect([refused.code, refused.json().error.code]).toEqual([4, 'call_would_revert']);
    expect(await s.pub.getTransactionCount({ address: agent.address })).toBe(0);
    await s.sb.control('/__sandbox/fund', { address: poor.address, usdc: String(5n * USDC) });
    const again = await ask(agent, file);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    const pulled = await transfers(s, poor.address, agent.address);
    expect([pulled.total, pulled.count]).toEqual([1_500_000n, 1]);
  });

  it('RED TEAM: a sweep a day after a run was killed past its mined pull keeps that pull on S: the rerun pays with it (one pull, never short)', async () => {
    const agent = await grantTo(s, owner, '10', '50');
    const file = askFile('1.5');
    const killed = await ask(agent, file, { LOOPSIGN_CRASH_AFTER: 'ask_pull:mined:0' });
    expect(killed.code, killed.stderr).toBe(-1);
    // The killed ask was last touched 25 hours ago (the agent came back a day later).
    const op = recordedOfKind(s.home, 'ask').find((o) => o.data.request?.clientRequestId === path.basename(file, '.json'));
    expect(op).toBeDefined();
    const db = new Database(storeFile(s.home), { fileMustExist: true });
    try {
      db.prepare('UPDATE operations SET updated_at = ? WHERE id = ?').run(Date.now() - 25 * 3_600_000, op!.id);
    } finally {
      db.close();
    }
    const swept = await runCli(['--json', 'budget', 'sweep', '--yes'], s.home, { env: agent.env });
    expect(swept.code, swept.stdout + swept.stderr).toBe(0);
    const again = await ask(agent, file);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.json().status).toBe('submitted');
    const pulled = await pulledTo(agent.address);
    expect([pulled.total, pulled.count]).toEqual([1_500_000n, 1]);
    expect(await balance(agent.address)).toBe(0n);
  });

  it('RED TEAM: S has ETH for the pull but not for the ask: refused before the pull (insufficient_funds, nothing sent), O’s money stays with O', async () => {
    const agent = await grantTo(s, owner, '10', '50');
    // Enough gas for a pull (~0.5M gas), not for what the funds check asks of an ask (3M gas for a 3-call plan).
    const fees = await s.pub.estimateFeesPerGas();
    await s.sb.control('/__sandbox/fund', { address: agent.address, eth: formatEther(1_200_000n * fees.maxFeePerGas!) });
    const refused = await ask(agent, askFile('1.5'));
    expect([refused.code, refused.json().error?.code], refused.stdout + refused.stderr).toEqual([4, 'insufficient_funds']);
    expect((await pulledTo(agent.address)).total).toBe(0n);
    expect(await s.pub.getTransactionCount({ address: agent.address })).toBe(0);
  });

  it('premise of test/budget-pull-call.test.ts: redeemDelegations with an empty delegation chain, sent by the owner on the DeleGator, moves the owner’s USDC to anyone', async () => {
    // O is on the DeleGator since its first grant (the tests above).
    const code = await s.pub.getCode({ address: owner.address });
    expect(code?.toLowerCase()).toBe(`0xef0100${contracts.deleGator!.slice(2).toLowerCase()}`);
    const thief = privateKeyToAccount(`0x${'7'.repeat(64)}`).address;
    const before = await balance(thief);
    const empty = encodeAbiParameters(DELEGATION_CHAIN, [[]]);
    const transfer = encodeFunctionData({
      abi: parseAbi(['function transfer(address, uint256) returns (bool)']),
      functionName: 'transfer',
      args: [thief, 1_000_000n],
    });
    const data = encodeFunctionData({
      abi: parseAbi(['function redeemDelegations(bytes[], bytes32[], bytes[])']),
      functionName: 'redeemDelegations',
      args: [
        [empty],
        [`0x${'00'.repeat(32)}`],
        [encodePacked(['address', 'uint256', 'bytes'], [s.sb.info.tokens.USDC.address, 0n, transfer])],
      ],
    });
    const wallet = createWalletClient({ account: privateKeyToAccount(owner.key), transport: http(s.sb.info.rpcUrl) });
    const hash = await wallet.sendTransaction({ chain: null, to: contracts.delegationManager!, data });
    expect((await s.pub.waitForTransactionReceipt({ hash, pollingInterval: 50 })).status).toBe('success');
    expect((await balance(thief)) - before).toBe(1_000_000n);
  });
});
