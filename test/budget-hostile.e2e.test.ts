// On-chain budgets (issue 38) against a hostile agent: a script that holds the agent's key S (and nothing of loopsign)
// calls MetaMask's DelegationManager, the enforcers and the owner's account O directly, on the sandbox's anvil with
// the contracts deployed from @metamask/delegation-abis. Every bypass of an imported grant reverts or changes nothing:
// O's USDC and LREP and the enforcers' views are read after each. Then, with loopsign itself: a second agent's grant
// is independent, expiry, a UTC day boundary (the sandbox clock advanced) with `budget show` matching the enforcers,
// a paused DelegationManager failing closed (CLI and MCP), tampered grant files refused at import, each by its code.
//
// What this file proves about the chain it asserts as the chain's behaviour (the contracts enforce it, not loopsign):
// the last test signs the same grant with one caveat dropped and shows the very attempts refused above then pass, so
// these assertions fail if a grant were missing a caveat.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  encodePacked,
  http,
  parseAbi,
  type Hex,
  type PrivateKeyAccount,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { encodeDelegations } from '@metamask/delegation-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHome, registerSecret, runCli, type Home } from './helpers/cli.js';
import { anvilRpc, fundedWallet, openSession, type Session } from './helpers/chain.js';
import { startMcp } from './helpers/mcp.js';
import {
  delegationHash,
  delegationTypedData,
  pullCalldata,
  ROOT_AUTHORITY,
  SINGLE_DEFAULT_MODE,
  type Delegation,
} from '../src/budget/delegation.js';
import { delegationOf, grantDocument, parseGrantFile, type GrantFile } from '../src/budget/grant-file.js';
import { decodeGrantCaveats, grantCaveats, type Caveat } from '../src/budget/terms.js';
import type { DelegationContracts } from '../src/chains/delegation.js';

const USDC = 1_000_000n;
const DAY = 86_400;
const erc20 = parseAbi([
  'function balanceOf(address) view returns (uint256)',
  'function transfer(address to, uint256 amount) returns (bool)',
  'function approve(address spender, uint256 amount) returns (bool)',
  'function transferFrom(address from, address to, uint256 amount) returns (bool)',
]);
const managerAbi = parseAbi([
  'function redeemDelegations(bytes[] _permissionContexts, bytes32[] _modes, bytes[] _executionCallDatas)',
  'function owner() view returns (address)',
  'function pause()',
  'function unpause()',
  'function paused() view returns (bool)',
]);
const gatorAbi = parseAbi([
  'function execute(bytes32 mode, bytes executionCalldata) payable',
  'function executeFromExecutor(bytes32 mode, bytes executionCalldata) payable returns (bytes[])',
]);
const hookAbi = parseAbi([
  'function beforeHook(bytes _terms, bytes _args, bytes32 _mode, bytes _executionCallData, bytes32 _delegationHash, address _delegator, address _redeemer)',
]);
const nonceAbi = parseAbi(['function incrementNonce(address _delegationManager)']);
const periodViews = parseAbi([
  'function getAvailableAmount(bytes32 delegationHash, address delegationManager, bytes terms) view returns (uint256 availableAmount, bool isNewPeriod, uint256 currentPeriod)',
]);
const multiViews = parseAbi([
  'function getAvailableAmount(bytes32 delegationHash, address delegationManager, bytes terms, bytes args) view returns (uint256 availableAmount, bool isNewPeriod, uint256 currentPeriod)',
]);

/** ERC-7579 modes: byte 0 the call type (0x01 batch), byte 1 the execution type (0x01 try). */
const BATCH_MODE: Hex = `0x01${'00'.repeat(31)}`;
const TRY_MODE: Hex = `0x0001${'00'.repeat(30)}`;

let s: Session;
let contracts: DelegationContracts;
let usdc: Hex;
let lrep: Hex;
let owner: Awaited<ReturnType<typeof fundedWallet>>;

interface Agent {
  key: Hex;
  account: PrivateKeyAccount;
  home: Home;
  env: Record<string, string | undefined>;
  out: string;
  file: GrantFile;
  delegation: Delegation;
}
let a1: Agent;
let a2: Agent;

const balance = async (token: Hex, who: Hex) =>
  (await s.pub.readContract({ address: token, abi: erc20, functionName: 'balanceOf', args: [who] })) as bigint;
const chainNow = async () => Number((await s.pub.getBlock({ blockTag: 'latest' })).timestamp);
const advanceTo = async (at: number) => {
  const now = await chainNow();
  if (at > now) await s.sb.control('/__sandbox/time', { advanceSeconds: at - now });
};

/** A key of its own with ETH for gas, a home of its own (its imported grants are its own state). */
async function newAgent(): Promise<Omit<Agent, 'out' | 'file' | 'delegation'>> {
  const key = `0x${randomBytes(32).toString('hex')}` as Hex;
  registerSecret(key);
  const account = privateKeyToAccount(key);
  await s.sb.control('/__sandbox/fund', { address: account.address, eth: '1' });
  const env = { ...s.sb.env(), LOOPSIGN_KEYSTORE: undefined, LOOPSIGN_PASSWORD_FILE: undefined, LOOPSIGN_PRIVATE_KEY: key };
  return { key, account, home: makeHome(), env };
}

/** The owner grants with `loopsign budget grant --yes`; the agent imports the file with its own wallet. */
async function grantTo(agent: Omit<Agent, 'out' | 'file' | 'delegation'>, expires: string): Promise<Agent> {
  const out = path.join(s.home.dir, `grant-${agent.account.address.slice(2, 10)}.json`);
  const granted = await runCli(
    [
      '--json',
      'budget',
      'grant',
      '--to',
      agent.account.address,
      '--usdc-per-day',
      '10',
      '--usdc-per-30-days',
      '25',
      '--expires',
      expires,
      '--out',
      out,
      '--yes',
    ],
    s.home,
    { env: owner.env },
  );
  expect(granted.code, granted.stdout + granted.stderr).toBe(0);
  const imported = await runCli(['--json', 'budget', 'import', out], agent.home, { env: agent.env });
  expect(imported.code, imported.stdout + imported.stderr).toBe(0);
  const file = parseGrantFile(JSON.parse(readFileSync(out, 'utf8')), out);
  return { ...agent, out, file, delegation: delegationOf(file) };
}

/** What the enforcers say is left of a grant, under the DelegationManager (the state a redemption consumes). */
async function views(d: Delegation) {
  const hash = delegationHash(d);
  const [day, month] = await Promise.all([
    s.pub.readContract({
      address: contracts.erc20PeriodTransferEnforcer,
      abi: periodViews,
      functionName: 'getAvailableAmount',
      args: [hash, contracts.delegationManager, d.caveats[0]!.terms],
    }),
    s.pub.readContract({
      address: contracts.multiTokenPeriodEnforcer,
      abi: multiViews,
      functionName: 'getAvailableAmount',
      args: [hash, contracts.delegationManager, d.caveats[1]!.terms, encodeAbiParameters([{ type: 'uint256' }], [0n])],
    }),
  ]);
  return { day: day[0], month: month[0], dayPeriod: day[2], monthPeriod: month[2] };
}

/** Sends `data` to `to` from `from` with fixed gas (a refusal is mined as a revert, not stopped by an estimate). */
async function send(from: PrivateKeyAccount, to: Hex, data: Hex): Promise<'success' | 'reverted'> {
  const wallet = createWalletClient({ account: from, transport: http(s.sb.info.rpcUrl) });
  const hash = await wallet.sendTransaction({ chain: null, to, data, gas: 1_500_000n });
  return (await s.pub.waitForTransactionReceipt({ hash, pollingInterval: 50 })).status;
}

/** The revert reason of the same call, simulated (why the chain refused), or 'accepted'. */
async function reason(from: Hex, to: Hex, data: Hex): Promise<string> {
  return s.pub.call({ account: from, to, data }).then(
    () => 'accepted',
    (e: Error) => e.message,
  );
}

const single = (target: Hex, data: Hex, value = 0n) => encodePacked(['address', 'uint256', 'bytes'], [target, value, data]);
const redeem = (ctx: Hex, mode: Hex, execution: Hex) =>
  encodeFunctionData({ abi: managerAbi, functionName: 'redeemDelegations', args: [[ctx], [mode], [execution]] });
const transfer = (to: Hex, amount: bigint) => encodeFunctionData({ abi: erc20, functionName: 'transfer', args: [to, amount] });

beforeAll(async () => {
  s = await openSession({ raters: false });
  const manifest = JSON.parse(readFileSync(path.join(s.sb.stateDir, 'manifest.json'), 'utf8'));
  contracts = manifest.delegation.contracts as DelegationContracts;
  usdc = s.sb.info.tokens.USDC.address as Hex;
  lrep = s.sb.info.tokens.LREP.address as Hex;
  owner = await fundedWallet(s.sb, s.pub);
  await s.sb.control('/__sandbox/fund', { address: owner.address, usdc: String(100n * USDC) });
  // A fresh UTC day on the chain's clock, ten minutes in: both grants start at its 00:00, and the test walks the
  // clock to that day's last minute and over into the next.
  const now = await chainNow();
  await advanceTo(Math.floor(now / DAY) * DAY + DAY + 600);
  a1 = await grantTo(await newAgent(), '90d');
  a2 = await grantTo(await newAgent(), '2h');
});
afterAll(async () => {
  await s.sb.stop();
});

describe('a hostile agent holding S', () => {
  it('every bypass through the DelegationManager, the enforcers or the owner reverts or changes nothing', async () => {
    const S = a1.account;
    const O = owner.address;
    const dm = contracts.delegationManager;
    const ctx = encodeDelegations([a1.delegation]) as Hex;
    expect(await send(S, dm, pullCalldata(a1.delegation, usdc, S.address, 6n * USDC))).toBe('success');

    const other = privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`);
    const snapshot = async () => ({
      usdc: await balance(usdc, O),
      lrep: await balance(lrep, O),
      views: await views(a1.delegation),
      otherUsdc: await balance(usdc, other.address),
    });
    const before = await snapshot();
    expect(before.views.day).toBe(4n * USDC);
    expect(before.views.month).toBe(19n * USDC);

    // Each attempt: sent from S as a transaction (mined as a revert) and simulated for the reason the chain gives.
    const attempts: [what: string, to: Hex, data: Hex, because: RegExp][] = [
      [
        'another recipient',
        dm,
        redeem(ctx, SINGLE_DEFAULT_MODE, single(usdc, transfer(other.address, USDC))),
        /AllowedCalldataEnforcer:invalid-calldata/,
      ],
      [
        'another token (LREP)',
        dm,
        redeem(ctx, SINGLE_DEFAULT_MODE, single(lrep, transfer(S.address, USDC))),
        /ERC20PeriodTransferEnforcer:invalid-contract/,
      ],
      [
        'another function: approve',
        dm,
        redeem(
          ctx,
          SINGLE_DEFAULT_MODE,
          single(usdc, encodeFunctionData({ abi: erc20, functionName: 'approve', args: [S.address, 100n * USDC] })),
        ),
        /ERC20PeriodTransferEnforcer:invalid-method/,
      ],
      [
        'another function: transferFrom',
        dm,
        redeem(
          ctx,
          SINGLE_DEFAULT_MODE,
          single(usdc, encodeFunctionData({ abi: erc20, functionName: 'transferFrom', args: [O, S.address, USDC] })),
        ),
        /ERC20PeriodTransferEnforcer:invalid-execution-length|invalid-method/,
      ],
      [
        'more than is available today',
        dm,
        redeem(ctx, SINGLE_DEFAULT_MODE, single(usdc, transfer(S.address, 5n * USDC))),
        /transfer-amount-exceeded/,
      ],
      [
        'ETH along with the transfer',
        dm,
        redeem(ctx, SINGLE_DEFAULT_MODE, single(usdc, transfer(S.address, USDC), 1n)),
        /invalid-value|revert/,
      ],
      [
        'batch mode: two transfers within the day',
        dm,
        redeem(
          ctx,
          BATCH_MODE,
          encodeAbiParameters(
            [
              {
                type: 'tuple[]',
                components: [
                  { name: 'target', type: 'address' },
                  { name: 'value', type: 'uint256' },
                  { name: 'callData', type: 'bytes' },
                ],
              },
            ],
            [
              [
                { target: usdc, value: 0n, callData: transfer(S.address, 2n * USDC) },
                { target: usdc, value: 0n, callData: transfer(other.address, 2n * USDC) },
              ],
            ],
          ),
        ),
        /CaveatEnforcer:invalid-call-type/,
      ],
      [
        'try mode: a transfer that would be let fail',
        dm,
        redeem(ctx, TRY_MODE, single(usdc, transfer(S.address, 50n * USDC))),
        /CaveatEnforcer:invalid-execution-type/,
      ],
      [
        'O directly: execute',
        O,
        encodeFunctionData({
          abi: gatorAbi,
          functionName: 'execute',
          args: [SINGLE_DEFAULT_MODE, single(usdc, transfer(S.address, USDC))],
        }),
        /revert/i,
      ],
      [
        'O directly: executeFromExecutor',
        O,
        encodeFunctionData({
          abi: gatorAbi,
          functionName: 'executeFromExecutor',
          args: [SINGLE_DEFAULT_MODE, single(usdc, transfer(S.address, USDC))],
        }),
        /revert/i,
      ],
      [
        'USDC directly: transferFrom O',
        usdc,
        encodeFunctionData({ abi: erc20, functionName: 'transferFrom', args: [O, S.address, USDC] }),
        /revert/i,
      ],
    ];
    for (const [what, to, data, because] of attempts) {
      expect([what, await reason(S.address, to, data)]).toEqual([what, expect.stringMatching(because)]);
      expect([what, await send(S, to, data)]).toEqual([what, 'reverted']);
      expect([what, await snapshot()]).toEqual([what, before]);
    }

    // The enforcers called directly: their state is kept per caller, so S's call records S's own "allowance" and
    // nothing of what the DelegationManager's redemptions consume; no token moves. The same for the NonceEnforcer.
    const hook = (enforcer: Hex, terms: Hex, args: Hex) =>
      encodeFunctionData({
        abi: hookAbi,
        functionName: 'beforeHook',
        args: [terms, args, SINGLE_DEFAULT_MODE, single(usdc, transfer(S.address, 4n * USDC)), delegationHash(a1.delegation), O, S.address],
      });
    const c = a1.delegation.caveats;
    for (const [what, to, data] of [
      ['ERC20PeriodTransferEnforcer.beforeHook', c[0]!.enforcer, hook(c[0]!.enforcer, c[0]!.terms, '0x')],
      ['MultiTokenPeriodEnforcer.beforeHook', c[1]!.enforcer, hook(c[1]!.enforcer, c[1]!.terms, c[1]!.args)],
      [
        'NonceEnforcer.incrementNonce',
        contracts.nonceEnforcer,
        encodeFunctionData({ abi: nonceAbi, functionName: 'incrementNonce', args: [dm] }),
      ],
    ] as [string, Hex, Hex][]) {
      await send(S, to, data);
      expect([what, await snapshot()]).toEqual([what, before]);
    }

    // Re-delegating S → S2 (a chain S2 redeems: [S→S2, O→S]): O's caveats still bind every link. S2 cannot take the
    // USDC for itself nor pass the day's cap; what it can do is move USDC to S within the cap, counted in the same
    // windows (the enforcers key their state by O's delegation).
    const s2 = privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`);
    await s.sb.control('/__sandbox/fund', { address: s2.address, eth: '1' });
    const leafUnsigned = {
      delegate: s2.address,
      delegator: S.address,
      authority: delegationHash(a1.delegation),
      caveats: [] as Caveat[],
      salt: 1n,
    };
    const leaf: Delegation = {
      ...leafUnsigned,
      signature: await S.signTypedData(delegationTypedData(leafUnsigned, 31337, dm) as never),
    };
    const chain = encodeDelegations([leaf, a1.delegation]) as Hex;
    for (const [what, data, because] of [
      [
        'S2 pulls to itself',
        redeem(chain, SINGLE_DEFAULT_MODE, single(usdc, transfer(s2.address, USDC))),
        /AllowedCalldataEnforcer:invalid-calldata/,
      ],
      [
        'S2 pulls past the day',
        redeem(chain, SINGLE_DEFAULT_MODE, single(usdc, transfer(S.address, 5n * USDC))),
        /transfer-amount-exceeded/,
      ],
    ] as [string, Hex, RegExp][]) {
      expect([what, await reason(s2.address, dm, data)]).toEqual([what, expect.stringMatching(because)]);
      expect([what, await send(s2, dm, data)]).toEqual([what, 'reverted']);
      expect([what, await snapshot()]).toEqual([what, before]);
    }
    expect(await balance(usdc, s2.address)).toBe(0n);
    expect(await send(s2, dm, redeem(chain, SINGLE_DEFAULT_MODE, single(usdc, transfer(S.address, USDC))))).toBe('success');
    expect(await views(a1.delegation)).toMatchObject({ day: 3n * USDC, month: 18n * USDC });
    expect(before.usdc - (await balance(usdc, O))).toBe(USDC);
  });

  it("a second agent's grant is independent: its pulls leave the first's windows as they were, and the first's its", async () => {
    const first = await views(a1.delegation);
    const second = await views(a2.delegation);
    expect(second).toMatchObject({ day: 10n * USDC, month: 25n * USDC });
    expect(await send(a2.account, contracts.delegationManager, pullCalldata(a2.delegation, usdc, a2.account.address, 5n * USDC))).toBe(
      'success',
    );
    expect(await views(a1.delegation)).toEqual(first);
    expect(await views(a2.delegation)).toMatchObject({ day: 5n * USDC, month: 20n * USDC });
    // S cannot redeem S2's grant (the delegate is S2), nor S2 S's.
    for (const [who, d] of [
      [a1.account, a2.delegation],
      [a2.account, a1.delegation],
    ] as const) {
      const data = pullCalldata(d, usdc, who.address, USDC);
      expect(await reason(who.address, contracts.delegationManager, data)).toMatch(/revert/i);
    }
    // Each agent's `budget show` lists its own grant only (its own home, its own imported record).
    for (const a of [a1, a2]) {
      const shown = await runCli(['--json', 'budget', 'show'], a.home, { env: a.env });
      expect(shown.code, shown.stdout + shown.stderr).toBe(0);
      expect(shown.json().grants.map((g: { grant: string }) => g.grant)).toEqual([a.file.delegations[0]!.hash]);
    }
  });

  it('expiry: past --expires `budget show` says expired, a pull reverts, and import refuses the file (budget_expired)', async () => {
    const expiresAt = a2.file.delegations[0]!.limits.expiresAt;
    await advanceTo(expiresAt + 1);
    const shown = await runCli(['--json', 'budget', 'show'], a2.home, { env: a2.env });
    expect(shown.code, shown.stdout + shown.stderr).toBe(0);
    expect(shown.json().grants[0]).toMatchObject({ status: 'expired', expiresAt });
    const data = pullCalldata(a2.delegation, usdc, a2.account.address, USDC);
    expect(await reason(a2.account.address, contracts.delegationManager, data)).toContain('TimestampEnforcer:expired-delegation');
    const ownerBefore = await balance(usdc, owner.address);
    expect(await send(a2.account, contracts.delegationManager, data)).toBe('reverted');
    expect(await balance(usdc, owner.address)).toBe(ownerBefore);
    const again = await runCli(['--json', 'budget', 'import', a2.out], makeHome(), { env: a2.env });
    expect([again.code, again.json().error?.code]).toEqual([5, 'budget_expired']);
  });

  it("pulls straddling a UTC day boundary: the day's cap resets at 00:00, the 30-day cap holds, `budget show` matches the enforcers", async () => {
    const S = a1.account;
    const dm = contracts.delegationManager;
    const start = a1.file.delegations[0]!.limits.start;
    const show = async () => {
      const r = await runCli(['--json', 'budget', 'show'], a1.home, { env: a1.env });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const g = r.json().grants[0];
      const v = await views(a1.delegation);
      // What loopsign shows is what the enforcers say.
      expect(g.windows.map((w: { available: string }) => BigInt(w.available))).toEqual([v.day, v.month]);
      return g;
    };
    const pull = (amount: bigint) => send(S, dm, pullCalldata(a1.delegation, usdc, S.address, amount));
    const ownerStart = await balance(usdc, owner.address);

    // The day's last minute: what is left of it, then nothing more.
    await advanceTo(start + DAY - 60);
    expect(await views(a1.delegation)).toMatchObject({ day: 3n * USDC, month: 18n * USDC });
    expect(await pull(3n * USDC)).toBe('success');
    expect(await pull(1n)).toBe('reverted');
    expect((await show()).windows[0]).toMatchObject({ used: '10000000', available: '0', resetsAt: start + DAY });

    // Over midnight: a new day's 10, but the 30-day window (15 left) still binds.
    await advanceTo(start + DAY + 60);
    const reset = await show();
    expect(reset.status).toBe('active');
    expect(reset.windows).toEqual([
      expect.objectContaining({ window: 'day', used: '0', available: '10000000', resetsAt: start + 2 * DAY }),
      expect.objectContaining({ window: '30days', used: '10000000', available: '15000000', resetsAt: start + 30 * DAY }),
    ]);
    expect(await pull(10n * USDC)).toBe('success');
    expect(await pull(1n)).toBe('reverted');
    // The next day: 10 for the day, but only 5 left of the 30 days.
    await advanceTo(start + 2 * DAY + 60);
    expect(await reason(S.address, dm, pullCalldata(a1.delegation, usdc, S.address, 6n * USDC))).toContain(
      'MultiTokenPeriodEnforcer:transfer-amount-exceeded',
    );
    expect(await pull(6n * USDC)).toBe('reverted');
    expect(await pull(5n * USDC)).toBe('success');
    const last = await show();
    expect(last.windows.map((w: { available: string }) => w.available)).toEqual(['5000000', '0']);
    // Around the boundary O lost exactly what the enforcers allowed: 3 + 10 + 5.
    expect(ownerStart - (await balance(usdc, owner.address))).toBe(18n * USDC);
  });

  it('a paused DelegationManager: `budget show` and loopsign_budget fail closed (budget_unavailable, exit 4), pulls revert', async () => {
    const dm = contracts.delegationManager;
    const m = await startMcp(a1.home, { env: a1.env });
    try {
      // Before the pause, the MCP tool is `budget show`'s document (the same core function and request).
      // The grant file inside the server's roots (the agent's home): a path the agent names passes the file gate.
      const inRoots = a1.home.file('grant.json', readFileSync(a1.out, 'utf8'));
      const cli = await runCli(['--json', 'budget', 'show', '--grant', inRoots], a1.home, { env: a1.env });
      const tool = await m.call('loopsign_budget', { grant: inRoots });
      expect(tool.isError, JSON.stringify(tool.doc)).toBe(false);
      const strip = (d: any) => d.grants.map(({ chainTime: _, ...g }: any) => g);
      expect(strip(tool.doc)).toEqual(strip(cli.json()));
      expect(strip((await m.call('loopsign_budget')).doc)).toEqual(strip(cli.json()));

      const managerOwner = (await s.pub.readContract({ address: dm, abi: managerAbi, functionName: 'owner' })) as Hex;
      await anvilRpc(s, 'anvil_impersonateAccount', [managerOwner]);
      const asOwner = async (functionName: 'pause' | 'unpause') => {
        const hash = (await anvilRpc(s, 'eth_sendTransaction', [
          { from: managerOwner, to: dm, data: encodeFunctionData({ abi: managerAbi, functionName }), gas: '0x30000' },
        ])) as Hex;
        expect((await s.pub.waitForTransactionReceipt({ hash, pollingInterval: 50 })).status).toBe('success');
      };
      await asOwner('pause');
      try {
        expect(await s.pub.readContract({ address: dm, abi: managerAbi, functionName: 'paused' })).toBe(true);
        const shown = await runCli(['--json', 'budget', 'show'], a1.home, { env: a1.env });
        expect([shown.code, shown.json().error?.code], shown.stdout + shown.stderr).toEqual([4, 'budget_unavailable']);
        const text = await runCli(['budget', 'show'], a1.home, { env: a1.env });
        expect(text.code).toBe(4);
        expect(text.stderr).toContain('paused');
        const tool = await m.call('loopsign_budget');
        expect(tool.doc.error).toMatchObject({ code: 'budget_unavailable', exitCode: 4 });
        const ownerBefore = await balance(usdc, owner.address);
        expect(await send(a1.account, dm, pullCalldata(a1.delegation, usdc, a1.account.address, 1n))).toBe('reverted');
        expect(await balance(usdc, owner.address)).toBe(ownerBefore);
      } finally {
        await asOwner('unpause');
        await anvilRpc(s, 'anvil_stopImpersonatingAccount', [managerOwner]);
      }
      expect((await runCli(['--json', 'budget', 'show'], a1.home, { env: a1.env })).code).toBe(0);
    } finally {
      expect(await m.stop()).toBe(0);
    }
  });

  it('a tampered grant file is refused at import, each tamper by its own code, nothing recorded', async () => {
    const base = JSON.parse(readFileSync(a1.out, 'utf8'));
    const O = privateKeyToAccount(owner.key);
    const S = a1.account.address;
    const limits = decodeGrantCaveats(contracts, a1.delegation.caveats);
    const signed = async (caveats: Caveat[], patch: Partial<Omit<Delegation, 'signature' | 'caveats'>> = {}) => {
      const unsigned = { delegate: S, delegator: O.address, authority: ROOT_AUTHORITY as Hex, caveats, salt: 99n, ...patch };
      const signature = await O.signTypedData(delegationTypedData(unsigned, 31337, contracts.delegationManager) as never);
      return grantDocument({
        chainId: 31337,
        owner: O.address,
        session: S,
        delegationManager: contracts.delegationManager,
        deleGator: contracts.deleGator,
        entry: { asset: 'USDC', hash: delegationHash(unsigned), delegation: { ...unsigned, signature }, limits },
        createdAt: new Date(),
      });
    };
    const edit = (f: (d: any) => void) => {
      const d = JSON.parse(JSON.stringify(base));
      f(d);
      return d;
    };
    const all = grantCaveats(contracts, limits);
    const cases: [string, unknown, string][] = [
      [
        'an open delegate (ANY_DELEGATE), signed',
        await signed(all, { delegate: '0x0000000000000000000000000000000000000a11' }),
        'budget_grant_wrong_session',
      ],
      [
        'a re-delegation (authority not root), signed',
        await signed(all, { authority: delegationHash(a1.delegation) }),
        'budget_grant_caveats',
      ],
      [
        'the expiry caveat dropped, signed',
        await signed(all.filter((c) => c.enforcer !== contracts.timestampEnforcer)),
        'budget_grant_caveats',
      ],
      ['the nonce caveat dropped, signed', await signed(all.filter((c) => c.enforcer !== contracts.nonceEnforcer)), 'budget_grant_caveats'],
      [
        'an unknown enforcer in place of the recipient check, signed',
        await signed(all.map((c) => (c.enforcer === contracts.allowedCalldataEnforcer ? { ...c, enforcer: owner.address } : c))),
        'budget_grant_caveats',
      ],
      [
        'the signature flipped',
        edit(
          (d) =>
            (d.delegations[0].delegation.signature = `${d.delegations[0].delegation.signature.slice(0, -4)}00${d.delegations[0].delegation.signature.slice(-2)}`),
        ),
        'budget_grant_bad_signature',
      ],
      ['the salt edited', edit((d) => (d.delegations[0].delegation.salt = '1')), 'budget_grant_caveats'],
      ['the limits copy raised', edit((d) => (d.delegations[0].limits.perDay = '20000000')), 'budget_grant_caveats'],
      ['the DeleGator named another', edit((d) => (d.deleGator = owner.address)), 'budget_grant_unknown_contract'],
      ['an extra field', edit((d) => (d.sweepAbove = '0')), 'budget_grant_invalid'],
    ];
    const fresh = makeHome();
    for (const [what, doc, code] of cases) {
      const file = fresh.file(`tampered-${Math.random().toString(36).slice(2)}.json`, JSON.stringify(doc));
      const r = await runCli(['--json', 'budget', 'import', file], fresh, { env: a1.env });
      expect([what, r.code, r.json().error?.code], r.stdout + r.stderr).toEqual([what, code === 'budget_grant_invalid' ? 2 : 5, code]);
    }
    const none = await runCli(['--json', 'budget', 'show'], fresh, { env: a1.env });
    expect(none.json().error?.code).toBe('budget_no_grant');
  });

  it('the proofs above can fail: the same grant with one caveat dropped lets the refused attempts through', async () => {
    // Signed straight with O's key (loopsign would never sign or import these): each lacks one caveat.
    const O = privateKeyToAccount(owner.key);
    const S = a1.account;
    const limits = decodeGrantCaveats(contracts, a1.delegation.caveats);
    const weak = async (drop: Hex) => {
      const unsigned = {
        delegate: S.address,
        delegator: O.address,
        authority: ROOT_AUTHORITY as Hex,
        caveats: grantCaveats(contracts, limits).filter((c) => c.enforcer !== drop),
        salt: BigInt(`0x${randomBytes(16).toString('hex')}`),
      };
      return { ...unsigned, signature: await O.signTypedData(delegationTypedData(unsigned, 31337, contracts.delegationManager) as never) };
    };
    const other = privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`).address;
    // Without the AllowedCalldataEnforcer, "another recipient" goes through.
    const noRecipient = await weak(contracts.allowedCalldataEnforcer);
    expect(await send(S, contracts.delegationManager, pullCalldata(noRecipient, usdc, other, USDC))).toBe('success');
    expect(await balance(usdc, other)).toBe(USDC);
    // Without the ERC20PeriodTransferEnforcer, "more than is available today" goes through (11 > 10 a day).
    const noDay = await weak(contracts.erc20PeriodTransferEnforcer);
    expect(await send(S, contracts.delegationManager, pullCalldata(noDay, usdc, S.address, 11n * USDC))).toBe('success');
  });
});
