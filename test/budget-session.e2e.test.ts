// The agent's side of on-chain budgets after the import (issue 38), through the built binary on the sandbox with
// MetaMask's contracts: `config show` warns where the local policy is looser than the imported grant (text and JSON);
// `history` labels what a session address paid ("paid by S, grant of O") and `history --owner O` sums across an
// owner's session addresses; `budget sweep` returns S's USDC above a float to O as a journaled transaction, keeps what
// a pending ask (killed between its reservation and its submission) still needs, and is not counted as spending.
// The pulls are a plain script's (the ask's own pull is another change); every assertion here needs this change.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createWalletClient, http, parseAbi, type Hex, type PrivateKeyAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHome, registerSecret, runCli, type Home } from './helpers/cli.js';
import { fundedWallet, openSession, type Session } from './helpers/chain.js';
import { recorded, storeFile } from './helpers/store.js';
import { runOnPty, until } from './helpers/pty.js';
import Database from 'better-sqlite3';
import { pullCalldata } from '../src/budget/delegation.js';
import { delegationOf, parseGrantFile } from '../src/budget/grant-file.js';
import type { DelegationContracts } from '../src/chains/delegation.js';

const USDC = 1_000_000n;
const erc20 = parseAbi(['function balanceOf(address) view returns (uint256)']);

let s: Session;
let contracts: DelegationContracts;
let usdc: Hex;
let owner: Awaited<ReturnType<typeof fundedWallet>>;
/** One machine that ran two session keys (a rotation): one database, one state folder. */
let agentHome: Home;
let n = 0;

interface Agent {
  account: PrivateKeyAccount;
  env: Record<string, string | undefined>;
  grant: string;
  pull(amount: bigint): Promise<void>;
}
let s1: Agent;
let s2: Agent;

const balance = async (who: Hex) =>
  (await s.pub.readContract({ address: usdc, abi: erc20, functionName: 'balanceOf', args: [who] })) as bigint;

function writePolicy(home: Home, policy: unknown): void {
  mkdirSync(path.join(home.env.XDG_CONFIG_HOME, 'loopsign'), { recursive: true });
  writeFileSync(path.join(home.env.XDG_CONFIG_HOME, 'loopsign', 'policy.json'), JSON.stringify(policy));
}

function askFile(home: Home): string {
  n++;
  return home.file(
    `session-ask-${n}.json`,
    JSON.stringify({
      chainId: 31337,
      clientRequestId: `session-${process.pid}-${n}-${Date.now()}`,
      maxPaymentAmount: '2500000',
      bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
      question: {
        title: `Session question ${n} ${Date.now()}`,
        contextUrl: 'https://example.com/session',
        categoryId: '1',
        tags: ['session'],
      },
    }),
  );
}

/** A session key, granted 10 USDC a day by O (`budget grant`) and imported on the agent's machine (`budget import`). */
async function agent(): Promise<Agent> {
  const key = `0x${randomBytes(32).toString('hex')}` as Hex;
  registerSecret(key);
  const account = privateKeyToAccount(key);
  await s.sb.control('/__sandbox/fund', { address: account.address, eth: '1' });
  const env = { ...s.sb.env(), LOOPSIGN_KEYSTORE: undefined, LOOPSIGN_PASSWORD_FILE: undefined, LOOPSIGN_PRIVATE_KEY: key };
  const out = path.join(s.home.dir, `grant-${account.address.slice(2, 10)}.json`);
  const args = ['--json', 'budget', 'grant', '--to', account.address, '--usdc-per-day', '10', '--usdc-per-30-days', '25'];
  const granted = await runCli([...args, '--expires', '90d', '--out', out, '--yes'], s.home, { env: owner.env });
  expect(granted.code, granted.stdout + granted.stderr).toBe(0);
  const imported = await runCli(['--json', 'budget', 'import', out], agentHome, { env });
  expect(imported.code, imported.stdout + imported.stderr).toBe(0);
  const delegation = delegationOf(parseGrantFile(JSON.parse(readFileSync(out, 'utf8')), out));
  const wallet = createWalletClient({ account, transport: http(s.sb.info.rpcUrl) });
  return {
    account,
    env,
    grant: granted.json().grant,
    pull: async (amount) => {
      const hash = await wallet.sendTransaction({
        chain: null,
        to: contracts.delegationManager,
        data: pullCalldata(delegation, usdc, account.address, amount),
      });
      expect((await s.pub.waitForTransactionReceipt({ hash, pollingInterval: 50 })).status).toBe('success');
    },
  };
}

beforeAll(async () => {
  s = await openSession({ raters: false, rateLimits: { write: 10_000, read: 10_000 } });
  const manifest = JSON.parse(readFileSync(path.join(s.sb.stateDir, 'manifest.json'), 'utf8'));
  contracts = manifest.delegation.contracts as DelegationContracts;
  usdc = s.sb.info.tokens.USDC.address as Hex;
  owner = await fundedWallet(s.sb, s.pub);
  await s.sb.control('/__sandbox/fund', { address: owner.address, usdc: String(100n * USDC) });
  agentHome = makeHome();
  s1 = await agent();
  s2 = await agent();
});
afterAll(async () => {
  await s.sb.stop();
});

describe('config show, with a grant imported', () => {
  it('warns where the local policy is looser than the grant, in text and JSON; not where it is tighter, nor on the owner', async () => {
    writePolicy(agentHome, { version: 1, perAsk: { maxUsdc: '5000000' }, rolling24h: { '31337': { maxUsdc: '50000000' } } });
    const loose = await runCli(['--json', 'config', 'show'], agentHome, { env: s1.env });
    expect(loose.code, loose.stderr).toBe(0);
    const b = loose.json().budget;
    expect(b.wallet).toBe(s1.account.address);
    expect(b.grants).toEqual([
      expect.objectContaining({ grant: s1.grant, owner: owner.address, perDay: '10000000', per30Days: '25000000' }),
    ]);
    expect(b.warnings).toEqual([
      expect.objectContaining({ grant: s1.grant, policyLimit: 'rolling24h', window: 'day', policyCap: '50000000', grantCap: '10000000' }),
      expect.objectContaining({ grant: s1.grant, policyLimit: 'calendarMonth', window: '30days', policyCap: null, grantCap: '25000000' }),
    ]);
    const text = await runCli(['config', 'show'], agentHome, { env: s1.env });
    expect(text.stdout).toContain('warning: the spending policy allows 50 USDC in any 24 hours, more than grant');
    expect(text.stdout).toContain('per UTC day (10 USDC): the grant binds');
    expect(text.stdout).toContain('sets no USDC limit in a calendar month');

    writePolicy(agentHome, {
      version: 1,
      perAsk: { maxUsdc: '5000000' },
      rolling24h: { '31337': { maxUsdc: '8000000' } },
      calendarMonth: { '31337': { maxUsdc: '20000000' } },
    });
    const tight = await runCli(['--json', 'config', 'show'], agentHome, { env: s1.env });
    expect(tight.json().budget.warnings).toEqual([]);
    expect((await runCli(['config', 'show'], agentHome, { env: s1.env })).stdout).not.toContain('warning:');
    // The owner's machine records the grants it gave; they bound the agents, not the owner's own spending.
    const ownerView = await runCli(['--json', 'config', 'show'], s.home, { env: owner.env });
    expect(ownerView.json().budget).toEqual({ wallet: owner.address, grants: [], warnings: [] });
  });
});

describe('history and sweep of session addresses', () => {
  it('labels what each session paid "paid by S, grant of O"; --owner O sums across both sessions and leaves the rest out', async () => {
    await s1.pull(5n * USDC);
    await s2.pull(5n * USDC);
    for (const env of [s1.env, s2.env, s.sb.env()]) {
      const r = await runCli(['--json', 'ask', '--file', askFile(agentHome), '--payment-mode', 'wallet_calls'], agentHome, { env });
      expect(r.code, r.stdout + r.stderr).toBe(0);
    }
    const all = await runCli(['--json', 'history'], agentHome, { env: s1.env });
    expect(all.code, all.stderr).toBe(0);
    const rows = all.json().rows as { wallet: string; amount: string; paidBy?: Record<string, unknown> }[];
    expect(rows).toHaveLength(3);
    const bySession = (a: Agent) => rows.find((r) => r.wallet.toLowerCase() === a.account.address.toLowerCase())!;
    expect(bySession(s1).paidBy).toEqual({ session: bySession(s1).wallet, owner: owner.address, grants: [s1.grant] });
    expect(bySession(s2).paidBy).toEqual({ session: bySession(s2).wallet, owner: owner.address, grants: [s2.grant] });
    expect(rows.find((r) => r.wallet.toLowerCase() === s.sb.info.devWallet.address.toLowerCase())!.paidBy).toBeUndefined();
    // One operation's journal carries the same label.
    const ops = (all.json().rows as { wallet: string; operation: string }[]).filter(
      (r) => r.wallet.toLowerCase() === s2.account.address.toLowerCase(),
    );
    const one = await runCli(['--json', 'history', '--operation', ops[0]!.operation], agentHome, { env: s1.env });
    expect(one.json().paidBy).toEqual({ session: ops[0]!.wallet, owner: owner.address, grants: [s2.grant] });
    const text = await runCli(['history'], agentHome, { env: s1.env });
    expect(text.stdout).toContain(`paid by ${bySession(s1).wallet}, grant of ${owner.address}`);

    const mine = await runCli(['--json', 'history', '--owner', owner.address], agentHome, { env: s1.env });
    expect(mine.code, mine.stderr).toBe(0);
    expect(mine.json().rows).toHaveLength(2);
    expect(mine.json().totals).toEqual([{ chainId: 31337, asset: 'USDC', amount: '3000000', display: '3 USDC' }]);
    expect(mine.json().owner.sessions.sort()).toEqual([s1.account.address.toLowerCase(), s2.account.address.toLowerCase()].sort());
    const mineText = await runCli(['history', '--owner', owner.address], agentHome, { env: s1.env });
    expect(mineText.stdout).toContain(`total on chain 31337 across the sessions of ${owner.address}: 3 USDC`);
    const nobody = privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`).address;
    const none = await runCli(['history', '--owner', nobody], agentHome, { env: s1.env });
    expect(none.stdout).toContain(`by a session address with a grant from ${nobody}`);
    const bad = await runCli(['--json', 'history', '--owner', '0x1234'], agentHome, { env: s1.env });
    expect([bad.code, bad.json().error.code]).toEqual([2, 'invalid_address']);
  });

  it('budget sweep: the plan first, then S1 above --float back to O, journaled and not counted as spending', async () => {
    const before = { s1: await balance(s1.account.address), owner: await balance(owner.address) };
    expect(before.s1).toBe(3_500_000n);
    const spent = (await runCli(['--json', 'history'], agentHome, { env: s1.env })).json();
    const unconfirmed = await runCli(['--json', 'budget', 'sweep', '--float', '1'], agentHome, { env: s1.env });
    expect([unconfirmed.code, unconfirmed.json().error?.code], unconfirmed.stdout + unconfirmed.stderr).toEqual([
      5,
      'budget_sweep_confirmation_required',
    ]);
    expect(unconfirmed.json().error.plan).toMatchObject({
      balances: { USDC: '3500000' },
      float: { USDC: '1000000' },
      reserved: { USDC: '0' },
      swept: { USDC: '2500000' },
    });
    expect(await balance(s1.account.address)).toBe(before.s1);

    const swept = await runCli(['--json', 'budget', 'sweep', '--float', '1', '--yes'], agentHome, { env: s1.env });
    expect(swept.code, swept.stdout + swept.stderr).toBe(0);
    const doc = swept.json();
    expect(doc).toMatchObject({ owner: owner.address, swept: { USDC: '2500000', LREP: '0' } });
    expect(doc.transactionHashes).toHaveLength(1);
    expect(await balance(s1.account.address)).toBe(1_000_000n);
    expect((await balance(owner.address)) - before.owner).toBe(2_500_000n);
    // Journaled like any transaction: its raw bytes and nonce, mined.
    const op = recorded(agentHome, doc.operation);
    expect(op).toMatchObject({ kind: 'budget-sweep', step: 'done' });
    expect(op.txs).toEqual([expect.objectContaining({ stage: 'sweep', status: 'mined', hash: doc.transactionHashes[0] })]);
    const journal = await runCli(['--json', 'history', '--operation', doc.operation], agentHome, { env: s1.env });
    expect(journal.code, journal.stderr).toBe(0);
    expect(journal.json().transactions).toEqual([expect.objectContaining({ hash: doc.transactionHashes[0] })]);
    // Not spending: history's rows, totals and the policy's windows are as before.
    const after = (await runCli(['--json', 'history'], agentHome, { env: s1.env })).json();
    expect({ rows: after.rows, totals: after.totals, windows: after.windows }).toEqual({
      rows: spent.rows,
      totals: spent.totals,
      windows: spent.windows,
    });
    // Nothing more above the float: nothing is sent.
    const again = await runCli(['--json', 'budget', 'sweep', '--float', '1', '--yes'], agentHome, { env: s1.env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.json().transactionHashes).toEqual([]);
  });

  it('on a terminal the plan is shown and asked y/N: no sends nothing (budget_declined), yes sweeps', async () => {
    await s1.pull(USDC);
    const held = await balance(s1.account.address);
    const ask = async (answer: string) => {
      const pty = runOnPty(['budget', 'sweep', '--float', '1'], agentHome, { ...s1.env, TERM: 'xterm-256color' });
      try {
        await until(pty.output, /Send it\?/, 60_000);
        // The prompt as a person reads it: styles and carriage returns left out, its wrapped lines joined.
        const plain = pty
          .output()
          .replace(/\u001b\[[0-9;]*[A-Za-z]/g, '')
          .replace(/\r/g, '')
          .replace(/\s+/g, ' ');
        expect(plain).toMatch(/sweep from 0x[0-9a-fA-F]{40} \(this wallet\) back to 0x[0-9a-fA-F]{40}, the owner of its grant/);
        expect(plain).toContain(`USDC: balance ${Number(held) / 1e6} USDC, keep 1 USDC (--float): sweep ${Number(held) / 1e6 - 1} USDC`);
        pty.type(answer);
        return { code: await pty.exited, output: pty.output() };
      } finally {
        pty.kill();
      }
    };
    const no = await ask('n\r');
    expect(no.code, no.output.slice(-1000)).toBe(5);
    expect(no.output).toMatch(/the sweep was declined at the prompt; nothing was signed or sent/);
    expect(await balance(s1.account.address)).toBe(held);
    const yes = await ask('y\r');
    expect(yes.code, yes.output.slice(-1000)).toBe(0);
    expect(yes.output).toMatch(/swept in 0x[0-9a-f]{64}/);
    expect(await balance(s1.account.address)).toBe(1_000_000n);
  });

  it('keeps what an ask killed mid-flight still needs; the rerun ask then pays from it', async () => {
    // S2 holds 3.5 USDC; its ask is killed after its reservation is mined, before the submission pays the 1.5 bounty.
    const file = askFile(agentHome);
    const args = ['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'];
    const killed = await runCli(args, agentHome, { env: { ...s2.env, LOOPSIGN_CRASH_AFTER: 'ask:mined:0' } });
    expect(killed.code).toBe(-1);
    const held = await balance(s2.account.address);
    const swept = await runCli(['--json', 'budget', 'sweep', '--yes'], agentHome, { env: s2.env });
    expect(swept.code, swept.stdout + swept.stderr).toBe(0);
    expect(swept.json().reserved.USDC).toBe('1500000');
    expect(swept.json().pending).toEqual([expect.objectContaining({ needs: { USDC: '1500000' } })]);
    expect(swept.json().swept.USDC).toBe((held - 1_500_000n).toString());
    expect(await balance(s2.account.address)).toBe(1_500_000n);
    // The ask resumes from its journal and pays from what the sweep left.
    const resumed = await runCli(args, agentHome, { env: s2.env });
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(await balance(s2.account.address)).toBe(0n);
  });

  it('refuses to guess: an unfinished ask it cannot read (budget_sweep_pending), a session with grants from two owners (exit 2)', async () => {
    // An ask row whose request names no bounty (as an older or damaged journal might): its need is unknown.
    const id = `ask-${randomBytes(16).toString('hex')}`;
    const db = new Database(storeFile(agentHome));
    const now = Date.now();
    db.prepare(
      "INSERT INTO operations (id, kind, chain_id, wallet, step, data, created_at, updated_at) VALUES (?, 'ask', 31337, ?, 'created', ?, ?, ?)",
    ).run(id, s1.account.address.toLowerCase(), JSON.stringify({ clientRequestId: 'unreadable', request: {} }), now, now);
    db.close();
    await s1.pull(USDC);
    const held = await balance(s1.account.address);
    const refused = await runCli(['--json', 'budget', 'sweep', '--yes'], agentHome, { env: s1.env });
    expect([refused.code, refused.json().error?.code], refused.stdout + refused.stderr).toEqual([5, 'budget_sweep_pending']);
    expect(refused.json().error.message).toContain(id);
    expect(await balance(s1.account.address)).toBe(held);
    const cleanup = new Database(storeFile(agentHome));
    cleanup.prepare('DELETE FROM operations WHERE id = ?').run(id);
    cleanup.close();

    // A second owner grants S1 too: whose tokens S1 holds is no longer known.
    const other = await fundedWallet(s.sb, s.pub);
    const out = path.join(s.home.dir, 'grant-second-owner.json');
    const args = ['--json', 'budget', 'grant', '--to', s1.account.address, '--usdc-per-day', '1', '--usdc-per-30-days', '2'];
    const granted = await runCli([...args, '--expires', '1d', '--out', out, '--yes'], s.home, { env: other.env });
    expect(granted.code, granted.stdout + granted.stderr).toBe(0);
    expect((await runCli(['--json', 'budget', 'import', out], agentHome, { env: s1.env })).code).toBe(0);
    const two = await runCli(['--json', 'budget', 'sweep', '--yes'], agentHome, { env: s1.env });
    expect([two.code, two.json().error?.code], two.stdout + two.stderr).toEqual([2, 'usage']);
    expect(two.json().error.message).toContain('2 owners');
    expect(await balance(s1.account.address)).toBe(held);
  });
});
