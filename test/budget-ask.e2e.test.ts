// Asks paid from an owner's on-chain budget (issue 38), end to end on the sandbox with MetaMask's contracts: the owner O
// grants an agent's wallet S (which holds ETH for gas and no USDC) a budget with `loopsign budget grant`, S imports it,
// and S's own `loopsign ask` (ordered, --atomic, x402, and the MCP ask tool) pulls exactly what it pays from O through
// the DelegationManager. A run killed between its pull and its payment, run again, pulls nothing more. Past the grant's
// daily cap the ask is refused (budget_exhausted, with resetsAt) before anything is signed; a revoked grant likewise.
// Every assertion reads the chain (O's transfers to S, balances), never loopsign's own word.
import path from 'node:path';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createWalletClient, encodeFunctionData, http, parseAbi, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHome, runCli } from './helpers/cli.js';
import { anvilRpc, openSession, type Session } from './helpers/chain.js';
import { startMcp } from './helpers/mcp.js';
import { delegationHash } from '../src/budget/delegation.js';
import { delegationOf, parseGrantFile } from '../src/budget/grant-file.js';
import { decodeGrantCaveats, grantCaveats } from '../src/budget/terms.js';
import type { DelegationContracts } from '../src/chains/delegation.js';
import { agentWithGrant as grantTo, budgetAsk, budgetOwner, transfers, usdcOf, USDC, type Agent, type Owner } from './helpers/budget.js';

let s: Session;
let owner: Owner;
let contracts: Record<string, Hex>;

beforeAll(async () => {
  // No clock jumps: a grant's day must not end between two asks of one test unless the test moves time itself.
  s = await openSession({ raters: false, autoAdvance: false });
  owner = await budgetOwner(s, 200n * USDC);
  contracts = JSON.parse(readFileSync(path.join(s.sb.stateDir, 'manifest.json'), 'utf8')).delegation.contracts;
});
afterAll(async () => {
  await s.sb.stop();
});

const balance = (who: Hex) => usdcOf(s, who);
const pulledTo = (to: Hex) => transfers(s, owner.address, to);
const agentWithGrant = (perDay: string, per30Days: string) => grantTo(s, owner, perDay, per30Days);
const agentWithGrantExpiring = (perDay: string, per30Days: string, expires: string) => grantTo(s, owner, perDay, per30Days, expires);
const askFile = (bounty: string, bonus?: string) => budgetAsk(s, bounty, bonus).file;

async function ask(agent: Agent, file: string, flags: string[] = [], env: Record<string, string> = {}) {
  return runCli(['--json', 'ask', '--file', file, ...flags], s.home, { env: { ...agent.env, ...env } });
}

describe('an ask paid from the owner’s grant', () => {
  it('ordered: pulls exactly the bounty and the bonus (each stage its own pull) and pays once; the pull is not policy spending', async () => {
    const agent = await agentWithGrant('10', '50');
    const ownerBefore = await balance(owner.address);
    const started = Date.now();
    const r = await ask(agent, askFile('1.5', '1'), ['--payment-mode', 'wallet_calls']);
    const ms = Date.now() - started;
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.json().status).toBe('submitted');
    expect(r.json().feedbackBonus.status).toBe('funded');
    const pulled = await pulledTo(agent.address);
    expect([pulled.total, pulled.count]).toEqual([2_500_000n, 2]);
    // The ask's own report names the pulls, and they are the chain's.
    expect(r.json().budgetPulls).toEqual([
      expect.objectContaining({ stage: 'ask', asset: 'USDC', amount: '1500000', status: 'mined' }),
      expect.objectContaining({ stage: 'bonus', asset: 'USDC', amount: '1000000', status: 'mined' }),
    ]);
    expect(
      r
        .json()
        .budgetPulls.map((p: { transactionHash: string }) => p.transactionHash.toLowerCase())
        .sort(),
    ).toEqual(pulled.hashes.map((h) => h.toLowerCase()).sort());
    expect(ownerBefore - (await balance(owner.address))).toBe(2_500_000n);
    expect(await balance(agent.address)).toBe(0n);
    const gas = await Promise.all(pulled.hashes.map(async (hash) => (await s.pub.getTransactionReceipt({ hash })).gasUsed));
    console.log(`gas per pull (through loopsign ask): first ${gas[0]}, later ${gas[1]}; ordered ask with two pulls took ${ms} ms`);

    // `budget show` (S's view, from the chain) agrees: 2.5 of 10 used today.
    const shown = await runCli(['--json', 'budget', 'show', '--grant', agent.grantFile], s.home, { env: agent.env });
    expect(shown.json().grants[0].windows[0]).toEqual(expect.objectContaining({ used: '2500000', available: '7500000' }));
  });

  it('the local policy counts the payment, not the pull: a 1.5 USDC ask passes a policy of 1.5 per ask and per 24 h', async () => {
    const agent = await agentWithGrant('10', '50');
    // A home of its own, with a policy whose every limit the ask meets exactly: counted twice, it would be refused.
    const h = makeHome();
    mkdirSync(path.join(h.env.XDG_CONFIG_HOME, 'loopsign'), { recursive: true });
    writeFileSync(
      path.join(h.env.XDG_CONFIG_HOME, 'loopsign', 'policy.json'),
      JSON.stringify({ version: 1, perAsk: { maxUsdc: '1500000' }, rolling24h: { '31337': { maxUsdc: '1500000' } } }),
    );
    const imported = await runCli(['--json', 'budget', 'import', agent.grantFile], h, { env: agent.env });
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);
    const file = h.file('policy-ask.json', readFileSync(askFile('1.5'), 'utf8'));
    const r = await runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'], h, { env: agent.env });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect((await pulledTo(agent.address)).total).toBe(1_500_000n);
    // The window is full now: the next ask is the policy's to refuse (exit 5), before any pull.
    const next = await runCli(['--json', 'ask', '--file', h.file('policy-ask-2.json', readFileSync(askFile('1'), 'utf8'))], h, {
      env: agent.env,
    });
    expect(next.code, next.stdout + next.stderr).toBe(5);
    expect(next.json().error.code).toBe('policy_limit');
    expect((await pulledTo(agent.address)).count).toBe(1);
  });

  it('--atomic: the pull is a call of the payment’s EIP-7702 batch', async () => {
    const agent = await agentWithGrant('10', '50');
    const r = await ask(agent, askFile('2'), ['--payment-mode', 'wallet_calls', '--atomic']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const pulled = await pulledTo(agent.address);
    expect([pulled.total, pulled.count]).toEqual([2_000_000n, 1]);
    // The pull's transaction is S's batch to itself, the one that also submits the question.
    const tx = await s.pub.getTransaction({ hash: pulled.hashes[0]! });
    expect(tx.to?.toLowerCase()).toBe(agent.address.toLowerCase());
    expect(r.json().transactionHashes.map((h: string) => h.toLowerCase())).toContain(pulled.hashes[0]!.toLowerCase());
    expect(await balance(agent.address)).toBe(0n);
  });

  it('x402: pulls first (mined), then signs the authorization; pays once', async () => {
    const agent = await agentWithGrant('10', '50');
    const r = await ask(agent, askFile('1.5'), ['--payment-mode', 'x402_authorization']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const pulled = await pulledTo(agent.address);
    expect([pulled.total, pulled.count]).toEqual([1_500_000n, 1]);
    expect(await balance(agent.address)).toBe(0n);
  });

  it('uses S’s free balance first: with 1 USDC of its own, a 1.5 USDC ask pulls 0.5', async () => {
    const agent = await agentWithGrant('10', '50');
    await s.sb.control('/__sandbox/fund', { address: agent.address, usdc: '1000000', eth: '1' });
    const r = await ask(agent, askFile('1.5'), ['--payment-mode', 'wallet_calls']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect((await pulledTo(agent.address)).total).toBe(500_000n);
    expect(await balance(agent.address)).toBe(0n);
  });

  // [crash point, payment flags, bonus]: ordered pulls (the ask's and the bonus's), the batch that carries the pull
  // (--atomic: the reservation alone, then pull + approval + submit), and x402 (the pull mined before the authorization).
  const kills: [string, string[], string | undefined][] = [
    ['ask_pull:signed:0', ['--payment-mode', 'wallet_calls'], undefined],
    ['ask_pull:mined:0', ['--payment-mode', 'wallet_calls'], undefined],
    ['ask:mined:0', ['--payment-mode', 'wallet_calls'], undefined],
    ['bonus_pull:mined:0', ['--payment-mode', 'wallet_calls'], '1'],
    ['ask:signed:1,2,3', ['--payment-mode', 'wallet_calls', '--atomic'], undefined],
    ['ask_pull:mined:0', ['--payment-mode', 'x402_authorization'], undefined],
    ['ask:x402_signed', ['--payment-mode', 'x402_authorization'], undefined],
  ];
  for (const [point, flags, bonus] of kills) {
    it(`killed at ${point} (${flags.slice(1).join(' ')}${bonus ? ', with a bonus' : ''}), then run again: pulls nothing more and pays once`, async () => {
      const agent = await agentWithGrant('10', '50');
      const file = askFile('1.5', bonus);
      const killed = await ask(agent, file, flags, { LOOPSIGN_CRASH_AFTER: point });
      expect(killed.code, killed.stderr).toBe(-1);
      const again = await ask(agent, file, flags);
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect(again.json().status).toBe('submitted');
      const pulled = await pulledTo(agent.address);
      // One pull per paying stage: the bounty's, and the bonus's when there is one.
      expect([pulled.total, pulled.count]).toEqual(bonus ? [2_500_000n, 2] : [1_500_000n, 1]);
      expect(await balance(agent.address)).toBe(0n);
    });
  }

  it('past the daily cap: budget_exhausted (exit 5) with resetsAt and retryAfterSeconds, before anything is signed', async () => {
    const agent = await agentWithGrant('2', '50');
    const first = await ask(agent, askFile('1.5'), ['--payment-mode', 'wallet_calls']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const nonce = await s.pub.getTransactionCount({ address: agent.address });
    const ownerBefore = await balance(owner.address);
    const refused = await ask(agent, askFile('1.5'), ['--payment-mode', 'wallet_calls']);
    expect(refused.code, refused.stdout + refused.stderr).toBe(5);
    const e = refused.json().error;
    expect(e.code).toBe('budget_exhausted');
    const chainNow = Number((await s.pub.getBlock()).timestamp);
    const dayStart = chainNow - (chainNow % 86_400);
    // The error's details are fields of its JSON: the window that binds, what it has left, when it resets.
    expect(e).toEqual(expect.objectContaining({ window: 'day', available: '500000', needed: '1500000', resetsAt: dayStart + 86_400 }));
    expect(e.retryAfterSeconds).toBeGreaterThan(0);
    expect(e.retryAfterSeconds).toBeLessThanOrEqual(86_400);
    // Nothing signed: S's nonce and O's balance did not move.
    expect(await s.pub.getTransactionCount({ address: agent.address })).toBe(nonce);
    expect(await balance(owner.address)).toBe(ownerBefore);
    // At resetsAt the day's cap is whole again: the same refused ask now pulls and pays.
    await s.sb.control('/__sandbox/time', { advanceSeconds: e.retryAfterSeconds + 1 });
    const after = await ask(agent, askFile('1.5'), ['--payment-mode', 'wallet_calls']);
    expect(after.code, after.stdout + after.stderr).toBe(0);
    expect((await pulledTo(agent.address)).total).toBe(3_000_000n);
  });

  it('an expired grant: budget_expired, nothing signed', async () => {
    const agent = await agentWithGrantExpiring('10', '50', '30m');
    await s.sb.control('/__sandbox/time', { advanceSeconds: 31 * 60 });
    const refused = await ask(agent, askFile('1.5'), ['--payment-mode', 'wallet_calls']);
    expect(refused.code, refused.stdout + refused.stderr).toBe(5);
    expect(refused.json().error.code).toBe('budget_expired');
    expect(await s.pub.getTransactionCount({ address: agent.address })).toBe(0);
  });

  it('a recorded grant edited after import (its daily cap raised, its hash made to match): budget_pull_refused, nothing signed', async () => {
    const agent = await agentWithGrant('10', '50');
    const doc = JSON.parse(readFileSync(agent.grantFile, 'utf8'));
    const recorded = path.join(s.home.env.XDG_STATE_HOME!, 'loopsign', 'budget', 'grants', `${doc.delegations[0].hash}.json`);
    // Only the owner's signature can tell: the caveats, the limits copy and the recorded hash all agree.
    const d = delegationOf(parseGrantFile(doc, recorded));
    const c = contracts as unknown as DelegationContracts;
    const caveats = grantCaveats(c, { ...decodeGrantCaveats(c, d.caveats), perDay: 100_000_000n });
    const edited = JSON.parse(JSON.stringify(doc));
    edited.delegations[0].delegation.caveats = caveats.map((x) => ({ enforcer: x.enforcer, terms: x.terms, args: x.args }));
    edited.delegations[0].limits.perDay = '100000000';
    edited.delegations[0].hash = delegationHash({ ...d, caveats });
    writeFileSync(recorded, JSON.stringify(edited));
    try {
      const refused = await ask(agent, askFile('1.5'), ['--payment-mode', 'wallet_calls']);
      expect(refused.code, refused.stdout + refused.stderr).toBe(5);
      expect(refused.json().error.code).toBe('budget_pull_refused');
      expect(await s.pub.getTransactionCount({ address: agent.address })).toBe(0);
    } finally {
      writeFileSync(recorded, JSON.stringify(doc));
    }
  });

  it('a paused DelegationManager: budget_unavailable (exit 4), nothing signed', async () => {
    const agent = await agentWithGrant('10', '50');
    const dm = contracts.delegationManager!;
    const managerOwner = (await s.pub.readContract({
      address: dm,
      abi: parseAbi(['function owner() view returns (address)']),
      functionName: 'owner',
    })) as Hex;
    const asOwner = async (fn: 'pause' | 'unpause') => {
      await anvilRpc(s, 'anvil_impersonateAccount', [managerOwner]);
      const hash = await anvilRpc(s, 'eth_sendTransaction', [
        { from: managerOwner, to: dm, data: encodeFunctionData({ abi: parseAbi([`function ${fn}()`]), functionName: fn }) },
      ]);
      await anvilRpc(s, 'anvil_stopImpersonatingAccount', [managerOwner]);
      expect((await s.pub.waitForTransactionReceipt({ hash, pollingInterval: 50 })).status).toBe('success');
    };
    await asOwner('pause');
    try {
      const refused = await ask(agent, askFile('1.5'), ['--payment-mode', 'wallet_calls']);
      expect(refused.code, refused.stdout + refused.stderr).toBe(4);
      expect(refused.json().error.code).toBe('budget_unavailable');
      expect(await s.pub.getTransactionCount({ address: agent.address })).toBe(0);
    } finally {
      await asOwner('unpause');
    }
  });

  it('a revoked grant (the owner moved its nonce on): budget_revoked, nothing signed', async () => {
    const agent = await agentWithGrant('10', '50');
    const ownerWallet = createWalletClient({ account: privateKeyToAccount(owner.key), transport: http(s.sb.info.rpcUrl) });
    const hash = await ownerWallet.writeContract({
      chain: null,
      address: contracts.nonceEnforcer!,
      abi: parseAbi(['function incrementNonce(address _delegationManager)']),
      functionName: 'incrementNonce',
      args: [contracts.delegationManager!],
    });
    expect((await s.pub.waitForTransactionReceipt({ hash, pollingInterval: 50 })).status).toBe('success');
    const refused = await ask(agent, askFile('1.5'), ['--payment-mode', 'wallet_calls']);
    expect(refused.code, refused.stdout + refused.stderr).toBe(5);
    expect(refused.json().error.code).toBe('budget_revoked');
    expect(await s.pub.getTransactionCount({ address: agent.address })).toBe(0);
  });

  it('the MCP ask tool pulls too (the same core)', async () => {
    // O's nonce moved on in the test before: a new grant is bound to the new nonce.
    const agent = await agentWithGrant('10', '50');
    // A home of its own: the MCP server's built-in default policy (20 USDC per 24 h on the chain, over every wallet of
    // the home's database) must not count this file's earlier asks. The agent imports its grant there.
    const h = makeHome();
    const imported = await runCli(['--json', 'budget', 'import', agent.grantFile], h, { env: agent.env });
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);
    const file = h.file('mcp-ask.json', readFileSync(askFile('1.5'), 'utf8'));
    const m = await startMcp(h, { env: agent.env });
    try {
      const r = await m.call('loopsign_ask', { file, paymentMode: 'wallet_calls' });
      expect(r.isError, JSON.stringify(r.doc)).toBe(false);
      expect(r.doc.budgetPulls).toEqual([expect.objectContaining({ stage: 'ask', amount: '1500000', status: 'mined' })]);
    } finally {
      await m.stop();
    }
    const pulled = await pulledTo(agent.address);
    expect([pulled.total, pulled.count]).toEqual([1_500_000n, 1]);
    expect(await balance(agent.address)).toBe(0n);
  });
});
