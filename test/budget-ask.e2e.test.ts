// Asks paid from an owner's on-chain budget (issue 38), end to end on the sandbox with MetaMask's contracts: the owner O
// grants an agent's wallet S (which holds ETH for gas and no USDC) a budget with `loopsign budget grant`, S imports it,
// and S's own `loopsign ask` (ordered, --atomic, x402, and the MCP ask tool) pulls exactly what it pays from O through
// the DelegationManager. A run killed between its pull and its payment, run again, pulls nothing more. Past the grant's
// daily cap the ask is refused (budget_exhausted, with resetsAt) before anything is signed; a revoked grant likewise.
// Every assertion reads the chain (O's transfers to S, balances), never loopsign's own word.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createWalletClient, http, parseAbi, parseAbiItem, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerSecret, runCli } from './helpers/cli.js';
import { fundedWallet, openSession, type Session } from './helpers/chain.js';
import { startMcp } from './helpers/mcp.js';

let s: Session;
let owner: Awaited<ReturnType<typeof fundedWallet>>;
let usdc: Hex;
let contracts: Record<string, Hex>;
const USDC = 1_000_000n;
const erc20 = parseAbi(['function balanceOf(address) view returns (uint256)']);
const transfer = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

beforeAll(async () => {
  s = await openSession({ raters: false });
  usdc = s.sb.info.tokens.USDC.address as Hex;
  owner = await fundedWallet(s.sb, s.pub);
  await s.sb.control('/__sandbox/fund', { address: owner.address, usdc: String(200n * USDC) });
  const manifest = JSON.parse(
    (await import('node:fs')).readFileSync(path.join(s.sb.stateDir, 'manifest.json'), 'utf8'),
  );
  contracts = manifest.delegation.contracts;
  // Not within an hour of 00:00 UTC on the chain's clock: each test's pulls fall in one UTC day.
  const chainNow = Number((await s.pub.getBlock()).timestamp);
  const toMidnight = 86_400 - (chainNow % 86_400);
  if (toMidnight < 3600) await s.sb.control('/__sandbox/time', { advanceSeconds: toMidnight + 60 });
});
afterAll(async () => {
  await s.sb.stop();
});

const balance = async (who: Hex) => (await s.pub.readContract({ address: usdc, abi: erc20, functionName: 'balanceOf', args: [who] })) as bigint;

/** What O moved to `to` in USDC, over the whole chain: the pulls, read from the token's own events. */
async function pulledTo(to: Hex): Promise<{ total: bigint; count: number; hashes: Hex[] }> {
  const logs = await s.pub.getLogs({ address: usdc, event: transfer, args: { from: owner.address, to }, fromBlock: 0n });
  return {
    total: logs.reduce((sum, l) => sum + (l.args.value ?? 0n), 0n),
    count: logs.length,
    hashes: logs.map((l) => l.transactionHash as Hex),
  };
}

export interface Agent {
  address: Hex;
  key: Hex;
  env: Record<string, string | undefined>;
  grantFile: string;
}

/** A fresh agent wallet S with gas and no USDC, granted `perDay`/`per30Days` USDC by O, the grant imported by S. */
async function agentWithGrant(perDay: string, per30Days: string): Promise<Agent> {
  const key = `0x${randomBytes(32).toString('hex')}` as Hex;
  registerSecret(key);
  const address = privateKeyToAccount(key).address;
  await s.sb.control('/__sandbox/fund', { address, eth: '1' });
  const grantFile = path.join(s.home.dir, `grant-${address}.json`);
  const granted = await runCli(
    ['--json', 'budget', 'grant', '--to', address, '--usdc-per-day', perDay, '--usdc-per-30-days', per30Days, '--expires', '7d', '--out', grantFile, '--yes'],
    s.home,
    { env: owner.env },
  );
  expect(granted.code, granted.stdout + granted.stderr).toBe(0);
  const env = { ...s.sb.env(), LOOPSIGN_KEYSTORE: undefined, LOOPSIGN_PASSWORD_FILE: undefined, LOOPSIGN_PRIVATE_KEY: key };
  const imported = await runCli(['--json', 'budget', 'import', grantFile], s.home, { env });
  expect(imported.code, imported.stdout + imported.stderr).toBe(0);
  return { address, key, env, grantFile };
}

let n = 0;
/** An ask file: a `bounty` (display USDC) bounty, and with `bonus` a USDC feedback bonus. */
function askFile(bounty: string, bonus?: string): string {
  const atomic = (v: string) => String(BigInt(Math.round(Number(v) * 1e6)));
  const id = `budget-${process.pid}-${Date.now()}-${n++}`;
  return s.home.file(
    `${id}.json`,
    JSON.stringify({
      chainId: 31337,
      clientRequestId: id,
      maxPaymentAmount: String(BigInt(atomic(bounty)) + (bonus ? BigInt(atomic(bonus)) : 0n)),
      bounty: { amount: atomic(bounty), asset: 'USDC', requiredVoters: '3' },
      ...(bonus ? { feedbackBonus: { amount: atomic(bonus), asset: 'USDC' } } : {}),
      question: { title: `Budget ask ${id}`, contextUrl: `https://example.com/budget/${id}`, categoryId: '1', tags: ['budget'] },
    }),
  );
}

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
    expect(ownerBefore - (await balance(owner.address))).toBe(2_500_000n);
    expect(await balance(agent.address)).toBe(0n);
    const gas = await Promise.all(pulled.hashes.map(async (hash) => (await s.pub.getTransactionReceipt({ hash })).gasUsed));
    console.log(`gas per pull (through loopsign ask): first ${gas[0]}, later ${gas[1]}; ordered ask with two pulls took ${ms} ms`);

    // `budget show` (S's view, from the chain) agrees: 2.5 of 10 used today.
    const shown = await runCli(['--json', 'budget', 'show', '--grant', agent.grantFile], s.home, { env: agent.env });
    expect(shown.json().grants[0].windows[0]).toEqual(expect.objectContaining({ used: '2500000', available: '7500000' }));
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

  for (const point of ['ask_pull:signed:0', 'ask_pull:mined:0', 'ask:mined:0']) {
    it(`killed at ${point}, then run again: pulls nothing more and pays once`, async () => {
      const agent = await agentWithGrant('10', '50');
      const file = askFile('1.5');
      const killed = await ask(agent, file, ['--payment-mode', 'wallet_calls'], { LOOPSIGN_CRASH_AFTER: point });
      expect(killed.code, killed.stderr).toBe(-1);
      const again = await ask(agent, file, ['--payment-mode', 'wallet_calls']);
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect(again.json().status).toBe('submitted');
      const pulled = await pulledTo(agent.address);
      expect([pulled.total, pulled.count]).toEqual([1_500_000n, 1]);
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
    const m = await startMcp(s.home, { env: agent.env });
    try {
      const r = await m.call('loopsign_ask', { file: askFile('1.5'), paymentMode: 'wallet_calls' });
      expect(r.isError, JSON.stringify(r.doc)).toBe(false);
    } finally {
      await m.stop();
    }
    const pulled = await pulledTo(agent.address);
    expect([pulled.total, pulled.count]).toEqual([1_500_000n, 1]);
    expect(await balance(agent.address)).toBe(0n);
  });
});
