// On-chain budgets (issue 38), end to end on the sandbox's anvil with MetaMask's own contracts (deployed from
// @metamask/delegation-abis): the owner O grants the agent's address S 10 USDC per UTC day and 25 per 30 days with
// `loopsign budget grant`; S (a plain viem script holding only S's key, as a hostile agent would) pulls through the
// DelegationManager; the chain refuses a fifth USDC that day and another recipient; `budget show` reads what the chain
// says. New commands: every assertion here fails without them.
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import path from 'node:path';
import { createWalletClient, http, isAddressEqual, parseAbi, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerSecret, runCli } from './helpers/cli.js';
import { fundedWallet, openSession, type Session } from './helpers/chain.js';
import { delegationHash, delegationTypedData, pullCalldata, ROOT_AUTHORITY, type Delegation } from '../src/budget/delegation.js';
import { delegationOf, grantDocument, parseGrantFile } from '../src/budget/grant-file.js';
import { grantCaveats, type Caveat } from '../src/budget/terms.js';
import type { DelegationContracts } from '../src/chains/delegation.js';
import { readFileSync } from 'node:fs';

let s: Session;
beforeAll(async () => {
  s = await openSession({ raters: false });
});
afterAll(async () => {
  await s.sb.stop();
});

// The first test's grant, for the import checks of the second.
let firstGrant: { out: string; ownerKey: Hex; agentKey: Hex; contracts: Record<string, Hex>; usdc: Hex } | undefined;

const erc20 = parseAbi(['function balanceOf(address) view returns (uint256)']);
const USDC = 1_000_000n;

describe('a budget grant the chain enforces', () => {
  it('lets the agent pull 6 + 4 USDC in a day, refuses a fifth and another recipient, and `budget show` matches the chain', async () => {
    const manifest = JSON.parse(readFileSync(path.join(s.sb.stateDir, 'manifest.json'), 'utf8'));
    const contracts = manifest.delegation.contracts as Record<string, Hex>;
    const usdc = s.sb.info.tokens.USDC.address as Hex;
    const owner = await fundedWallet(s.sb, s.pub);
    await s.sb.control('/__sandbox/fund', { address: owner.address, usdc: String(100n * USDC) });
    const agentKey = `0x${randomBytes(32).toString('hex')}` as Hex;
    registerSecret(agentKey);
    const agent = privateKeyToAccount(agentKey);
    await s.sb.control('/__sandbox/fund', { address: agent.address, eth: '1' });
    const balance = async (who: Hex) =>
      (await s.pub.readContract({ address: usdc, abi: erc20, functionName: 'balanceOf', args: [who] })) as bigint;

    // Not within a quarter hour of 00:00 UTC on the chain's clock: the four pulls below fall in one UTC day.
    const chainNow = Number((await s.pub.getBlock()).timestamp);
    const toMidnight = 86_400 - (chainNow % 86_400);
    if (toMidnight < 900) await s.sb.control('/__sandbox/time', { advanceSeconds: toMidnight + 60 });

    const out = path.join(s.home.dir, 'grant.json');
    const args = [
      '--json',
      'budget',
      'grant',
      '--to',
      agent.address,
      '--usdc-per-day',
      '10',
      '--usdc-per-30-days',
      '25',
      '--expires',
      '90d',
      '--out',
      out,
    ];
    // Without --yes and without a terminal, nothing is signed or written.
    const unconfirmed = await runCli(args, s.home, { env: owner.env });
    expect(unconfirmed.code, unconfirmed.stdout + unconfirmed.stderr).toBe(5);
    expect(unconfirmed.json().error.code).toBe('budget_confirmation_required');
    expect(() => statSync(out)).toThrow();
    expect(await s.pub.getCode({ address: owner.address })).toBeUndefined();

    const granted = await runCli([...args, '--yes'], s.home, { env: owner.env });
    expect(granted.code, granted.stdout + granted.stderr).toBe(0);
    const doc = granted.json();
    expect(doc.perDay).toBe('10000000');
    expect(doc.per30Days).toBe('25000000');
    expect(doc.session).toBe(agent.address);
    expect(doc.ownerCode).toBe('none');
    expect(doc.contracts.map((c: { trust: string }) => c.trust)).toEqual(Array(7).fill('pinned'));
    expect(statSync(out).mode & 0o777).toBe(0o600);
    // The owner now runs the pinned DeleGator (EIP-7702 designator).
    expect(await s.pub.getCode({ address: owner.address })).toBe(`0xef0100${contracts.deleGator!.slice(2).toLowerCase()}`);
    const file = parseGrantFile(JSON.parse(readFileSync(out, 'utf8')), out);
    firstGrant = { out, ownerKey: owner.key, agentKey, contracts, usdc };
    const delegation: Delegation = delegationOf(file);
    expect(isAddressEqual(delegation.delegator, owner.address)).toBe(true);

    const agentWallet = createWalletClient({ account: agent, transport: http(s.sb.info.rpcUrl) });
    const ownerBefore = await balance(owner.address);
    const gas: bigint[] = [];
    const pull = async (to: Hex, amount: bigint) => {
      const hash = await agentWallet.sendTransaction({
        chain: null,
        to: contracts.delegationManager,
        data: pullCalldata(delegation, usdc, to, amount),
        // Fixed gas: a refused pull is sent and mined as a revert (the chain's refusal), not stopped by an estimate.
        gas: 900_000n,
      });
      const receipt = await s.pub.waitForTransactionReceipt({ hash, pollingInterval: 50 });
      if (receipt.status === 'success') gas.push(receipt.gasUsed);
      return receipt.status;
    };
    const reason = async (to: Hex, amount: bigint) =>
      s.pub.call({ account: agent.address, to: contracts.delegationManager, data: pullCalldata(delegation, usdc, to, amount) }).then(
        () => 'accepted',
        (e: Error) => e.message,
      );

    expect(await pull(agent.address, 6n * USDC)).toBe('success');
    // Another recipient: refused by the AllowedCalldataEnforcer, while the day still has 4 left.
    const other = privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`).address;
    expect(await reason(other, 1n * USDC)).toContain('AllowedCalldataEnforcer:invalid-calldata');
    expect(await pull(other, 1n * USDC)).toBe('reverted');
    expect(await pull(agent.address, 4n * USDC)).toBe('success');
    // A fifth USDC that day: refused by the ERC20PeriodTransferEnforcer.
    expect(await reason(agent.address, 1n * USDC)).toContain('ERC20PeriodTransferEnforcer:transfer-amount-exceeded');
    expect(await pull(agent.address, 1n * USDC)).toBe('reverted');
    expect(ownerBefore - (await balance(owner.address))).toBe(10n * USDC);
    expect(await balance(agent.address)).toBe(10n * USDC);
    expect(await balance(other)).toBe(0n);
    console.log(`gas per pull: first ${gas[0]}, later ${gas[1]}`);

    // `budget show` (the grant recorded in the owner's state, and the file) says what the enforcers say.
    const start = file.delegations[0]!.limits.start;
    for (const showArgs of [
      ['--json', 'budget', 'show'],
      ['--json', 'budget', 'show', '--grant', out],
    ]) {
      const shown = await runCli(showArgs, s.home, { env: owner.env });
      expect(shown.code, shown.stdout + shown.stderr).toBe(0);
      const [g] = shown.json().grants;
      expect(g.status).toBe('active');
      expect(g.grant).toBe(file.delegations[0]!.hash);
      expect(g.windows).toEqual([
        expect.objectContaining({ window: 'day', cap: '10000000', used: '10000000', available: '0', resetsAt: start + 86_400 }),
        expect.objectContaining({
          window: '30days',
          cap: '25000000',
          used: '10000000',
          available: '15000000',
          resetsAt: start + 2_592_000,
        }),
      ]);
      expect(g.expiresAt).toBe(file.delegations[0]!.limits.expiresAt);
    }
  });

  it('budget import accepts the grant with its own wallet and refuses every other shape, each with its own code', async () => {
    const g = firstGrant!;
    const agentEnv = { ...s.sb.env(), LOOPSIGN_KEYSTORE: undefined, LOOPSIGN_PASSWORD_FILE: undefined, LOOPSIGN_PRIVATE_KEY: g.agentKey };
    const ok = await runCli(['--json', 'budget', 'import', g.out], s.home, { env: agentEnv });
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.json().status).toBe('active');
    expect(ok.json().windows[0].available).toBe('0');

    const base = JSON.parse(readFileSync(g.out, 'utf8'));
    const owner = privateKeyToAccount(g.ownerKey);
    const agent = privateKeyToAccount(g.agentKey).address;
    const c = g.contracts as unknown as DelegationContracts;
    const start = base.delegations[0].limits.start as number;
    const limits = {
      token: g.usdc,
      session: agent,
      perDay: 10_000_000n,
      per30Days: 25_000_000n,
      start,
      expiresAt: base.delegations[0].limits.expiresAt as number,
      nonce: 0n,
    };
    // A grant signed by `signer` (the real owner unless said) over these caveats, as a file.
    const signedGrant = async (caveats: Caveat[], signer = owner) => {
      const unsigned = { delegate: agent, delegator: signer.address, authority: ROOT_AUTHORITY as Hex, caveats, salt: 7n };
      const signature = await signer.signTypedData(delegationTypedData(unsigned, 31337, c.delegationManager) as never);
      return grantDocument({
        chainId: 31337,
        owner: signer.address,
        session: agent,
        delegationManager: c.delegationManager,
        deleGator: c.deleGator,
        entry: { asset: 'USDC', hash: delegationHash(unsigned), delegation: { ...unsigned, signature }, limits },
        createdAt: new Date(),
      });
    };
    const other = privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`);
    const cases: [string, unknown, string, Record<string, string | undefined>?][] = [
      ['another chain', { ...base, chainId: 8453 }, 'budget_grant_wrong_chain'],
      ['another DelegationManager', { ...base, delegationManager: other.address }, 'budget_grant_unknown_contract'],
      ['not JSON of a grant', { ...base, delegations: [] }, 'budget_grant_invalid'],
      [
        "another agent's wallet",
        base,
        'budget_grant_wrong_session',
        { ...agentEnv, LOOPSIGN_PRIVATE_KEY: `0x${randomBytes(32).toString('hex')}` },
      ],
      [
        'a signed extra caveat',
        await signedGrant([...grantCaveats(c, limits), { enforcer: c.nonceEnforcer, terms: '0x', args: '0x' }]),
        'budget_grant_caveats',
      ],
      [
        'a signed recipient other than this wallet',
        await signedGrant(grantCaveats(c, { ...limits, session: other.address })),
        'budget_grant_wrong_recipient',
      ],
      ['an owner not on the DeleGator', await signedGrant(grantCaveats(c, limits), other), 'budget_owner_not_delegated'],
    ];
    // Caps raised after signing, with the hash and limits copy made to match: only the signature can tell.
    const raised = await signedGrant(grantCaveats(c, limits));
    const more = grantCaveats(c, { ...limits, perDay: 20_000_000n });
    raised.delegations[0]!.delegation.caveats = more.map((x) => ({ enforcer: x.enforcer, terms: x.terms, args: x.args }));
    raised.delegations[0]!.limits.perDay = '20000000';
    raised.delegations[0]!.hash = delegationHash({
      delegate: agent,
      delegator: owner.address,
      authority: ROOT_AUTHORITY as Hex,
      caveats: more,
      salt: 7n,
    });
    cases.push(['caps raised after signing', raised, 'budget_grant_bad_signature']);
    // The same, with the hash left as signed: the edit shows without a signature check.
    const edited = JSON.parse(JSON.stringify(base));
    edited.delegations[0].delegation.caveats[0].terms = more[0]!.terms;
    cases.push(['caveats edited, hash kept', edited, 'budget_grant_caveats']);
    for (const [what, doc, code, env] of cases) {
      const file = s.home.file(`bad-${code}-${Math.random().toString(36).slice(2)}.json`, JSON.stringify(doc));
      const r = await runCli(['--json', 'budget', 'import', file], s.home, { env: env ?? agentEnv });
      expect([what, r.code, r.json().error?.code], r.stdout + r.stderr).toEqual([what, code === 'budget_grant_invalid' ? 2 : 5, code]);
    }
  });
});
