// LREP in an on-chain budget (issue 38), end to end on the sandbox with MetaMask's contracts: the owner O grants the
// agent's wallet S LREP caps beside the USDC ones (`budget grant --lrep-per-day --lrep-per-30-days`: a second
// delegation of the same five caveats for LREP), S imports it and `budget show` lists its LREP windows from the
// enforcers; an ask whose bounty is LREP pulls exactly that LREP from O; past the LREP daily cap the ask is refused
// (budget_exhausted, resetsAt) before anything is signed; an edited LREP caveat is refused at import like a USDC one.
// Every amount is read from the chain (the LREP token's Transfer events), never from loopsign's own word.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseAbiItem, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerSecret, runCli } from './helpers/cli.js';
import { openSession, type Session } from './helpers/chain.js';
import { budgetOwner, USDC, type Owner } from './helpers/budget.js';
import { createERC20TokenPeriodTransferTerms } from '@metamask/delegation-core';

let s: Session;
let owner: Owner;

beforeAll(async () => {
  s = await openSession({ raters: false, autoAdvance: false });
  owner = await budgetOwner(s, 100n * USDC);
  await s.sb.control('/__sandbox/fund', { address: owner.address, lrep: String(1000n * USDC) });
});
afterAll(async () => {
  await s.sb.stop();
});

const LREP = 1_000_000n;
const transfer = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
async function lrepPulled(to: Hex): Promise<{ total: bigint; count: number; hashes: Hex[] }> {
  const logs = await s.pub.getLogs({
    address: s.sb.info.tokens.LREP.address as Hex,
    event: transfer,
    args: { from: owner.address, to },
    fromBlock: 0n,
  });
  return {
    total: logs.reduce((t, l) => t + (l.args.value ?? 0n), 0n),
    count: logs.length,
    hashes: logs.map((l) => l.transactionHash as Hex),
  };
}

async function newAgent() {
  const key = `0x${randomBytes(32).toString('hex')}` as Hex;
  registerSecret(key);
  const address = privateKeyToAccount(key).address;
  await s.sb.control('/__sandbox/fund', { address, eth: '1' });
  const env = { ...s.sb.env(), LOOPSIGN_KEYSTORE: undefined, LOOPSIGN_PASSWORD_FILE: undefined, LOOPSIGN_PRIVATE_KEY: key };
  return { key, address, env };
}

async function grant(to: Hex, lrepPerDay: string, lrepPer30Days: string) {
  const out = path.join(s.home.dir, `lrep-grant-${to}.json`);
  const r = await runCli(
    [
      '--json',
      'budget',
      'grant',
      '--to',
      to,
      '--usdc-per-day',
      '5',
      '--usdc-per-30-days',
      '20',
      '--lrep-per-day',
      lrepPerDay,
      '--lrep-per-30-days',
      lrepPer30Days,
      '--expires',
      '7d',
      '--out',
      out,
      '--yes',
    ],
    s.home,
    { env: owner.env },
  );
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return { out, doc: r.json() };
}

let n = 0;
function lrepAsk(bounty: bigint): string {
  const id = `lrep-${process.pid}-${Date.now()}-${n++}`;
  return s.home.file(
    `${id}.json`,
    JSON.stringify({
      chainId: 31337,
      clientRequestId: id,
      maxPaymentAmount: String(bounty),
      bounty: { amount: String(bounty), asset: 'LREP', requiredVoters: '3' },
      question: { title: `LREP budget ask ${id}`, contextUrl: `https://example.com/lrep/${id}`, categoryId: '1', tags: ['budget'] },
    }),
  );
}

describe('LREP caps in a budget grant', () => {
  it('grant shows the LREP caps in its plan, import checks the LREP delegation, show lists its windows', async () => {
    const agent = await newAgent();
    // Both or neither: one LREP flag alone is a usage error before anything is read or signed.
    const half = await runCli(
      ['--json', 'budget', 'grant', '--to', agent.address, '--usdc-per-day', '1', '--usdc-per-30-days', '2', '--lrep-per-day', '3'].concat([
        '--expires',
        '7d',
        '--out',
        path.join(s.home.dir, 'half.json'),
        '--yes',
      ]),
      s.home,
      { env: owner.env },
    );
    expect(half.code, half.stdout + half.stderr).toBe(2);
    // The plan (what --json without --yes prints as the refusal's details) carries the LREP caps.
    const unconfirmed = await runCli(
      ['--json', 'budget', 'grant', '--to', agent.address, '--usdc-per-day', '5', '--usdc-per-30-days', '20'].concat([
        '--lrep-per-day',
        '30',
        '--lrep-per-30-days',
        '100',
        '--expires',
        '7d',
        '--out',
        path.join(s.home.dir, 'plan.json'),
      ]),
      s.home,
      { env: owner.env },
    );
    const planned = unconfirmed.json().error.plan.lrep;
    expect(planned).toMatchObject({ perDay: '30000000', per30Days: '100000000' });
    // The token's address is shown (an address is public: not the output filter's redacted API `token`).
    expect(planned.tokenAddress?.toLowerCase()).toBe(s.sb.info.tokens.LREP.address.toLowerCase());
    const { out, doc } = await grant(agent.address, '30', '100');
    expect(doc.lrep).toMatchObject({ perDay: '30000000', per30Days: '100000000' });
    const file = JSON.parse(readFileSync(out, 'utf8'));
    expect(file.delegations.map((d: { asset: string }) => d.asset)).toEqual(['USDC', 'LREP']);
    const imported = await runCli(['--json', 'budget', 'import', out], s.home, { env: agent.env });
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);
    expect(imported.json().lrep).toMatchObject({ asset: 'LREP', status: 'active', grant: file.delegations[1].hash });
    const shown = await runCli(['--json', 'budget', 'show', '--grant', out], s.home, { env: agent.env });
    expect(shown.code, shown.stdout + shown.stderr).toBe(0);
    const lrep = shown.json().grants.find((g: { asset: string }) => g.asset === 'LREP');
    expect(file.delegations[1].limits.token.toLowerCase()).toBe(s.sb.info.tokens.LREP.address.toLowerCase());
    expect(lrep.tokenAddress?.toLowerCase()).toBe(s.sb.info.tokens.LREP.address.toLowerCase());
    expect(lrep.windows.map((w: { cap: string; available: string }) => [w.cap, w.available])).toEqual([
      ['30000000', '30000000'],
      ['100000000', '100000000'],
    ]);
  });

  it('an LREP-bounty ask pulls exactly its LREP from the grant; past the LREP daily cap: budget_exhausted with resetsAt', async () => {
    const agent = await newAgent();
    const { out } = await grant(agent.address, '12', '100');
    expect((await runCli(['--json', 'budget', 'import', out], s.home, { env: agent.env })).code).toBe(0);
    const r = await runCli(['--json', 'ask', '--file', lrepAsk(10n * LREP), '--payment-mode', 'wallet_calls'], s.home, { env: agent.env });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.json().status).toBe('submitted');
    const pulled = await lrepPulled(agent.address);
    expect([pulled.total, pulled.count]).toEqual([10n * LREP, 1]);
    const gas = (await s.pub.getTransactionReceipt({ hash: pulled.hashes[0]! })).gasUsed;
    console.log(`gas of an LREP pull (through loopsign ask): ${gas}`);
    const shown = await runCli(['--json', 'budget', 'show', '--grant', out], s.home, { env: agent.env });
    const lrep = shown.json().grants.find((g: { asset: string }) => g.asset === 'LREP');
    expect(lrep.windows[0]).toMatchObject({ used: '10000000', available: '2000000' });

    // 5 more LREP today: the day has 2 left. Refused before anything is signed, with when it resets.
    const refused = await runCli(['--json', 'ask', '--file', lrepAsk(5n * LREP), '--payment-mode', 'wallet_calls'], s.home, {
      env: agent.env,
    });
    expect(refused.code, refused.stdout + refused.stderr).toBe(5);
    const e = refused.json().error;
    expect(e.code).toBe('budget_exhausted');
    expect(e).toMatchObject({ asset: 'LREP', window: 'day', available: '2000000', needed: '5000000' });
    expect(e.resetsAt % 86_400).toBe(0);
    expect(e.retryAfterSeconds).toBeGreaterThan(0);
    expect((await lrepPulled(agent.address)).count).toBe(1);
  });

  it('an edited LREP caveat (a larger daily cap, hash and limits copy kept) is refused at import: budget_grant_caveats', async () => {
    const agent = await newAgent();
    const { out } = await grant(agent.address, '3', '10');
    const file = JSON.parse(readFileSync(out, 'utf8'));
    const lrep = file.delegations[1];
    lrep.delegation.caveats[0].terms = createERC20TokenPeriodTransferTerms({
      tokenAddress: lrep.limits.token,
      periodAmount: 3_000_000_000n,
      periodDuration: 86_400,
      startDate: lrep.limits.start,
    });
    const edited = path.join(s.home.dir, `edited-${agent.address}.json`);
    writeFileSync(edited, JSON.stringify(file));
    const r = await runCli(['--json', 'budget', 'import', edited], s.home, { env: agent.env });
    expect(r.code, r.stdout + r.stderr).toBe(5);
    expect(r.json().error.code).toBe('budget_grant_caveats');
    // A foreign token in the LREP delegation's place: the same code.
    const file2 = JSON.parse(readFileSync(out, 'utf8'));
    file2.delegations[1].delegation.caveats[0].terms = createERC20TokenPeriodTransferTerms({
      tokenAddress: s.sb.info.tokens.USDC.address,
      periodAmount: 3_000_000n,
      periodDuration: 86_400,
      startDate: file2.delegations[1].limits.start,
    });
    const edited2 = path.join(s.home.dir, `edited2-${agent.address}.json`);
    writeFileSync(edited2, JSON.stringify(file2));
    const r2 = await runCli(['--json', 'budget', 'import', edited2], s.home, { env: agent.env });
    expect(r2.json().error.code).toBe('budget_grant_caveats');
    // The untouched file imports.
    expect((await runCli(['--json', 'budget', 'import', out], s.home, { env: agent.env })).code).toBe(0);
  });

  it('--eth-now sends the agent ETH once, after signing: more than 1 ETH is a usage error; a kill after signing it, run again, sends nothing more', async () => {
    const agent = await newAgent();
    const out = path.join(s.home.dir, `eth-grant-${agent.address}.json`);
    const args = (eth: string) =>
      ['--json', 'budget', 'grant', '--to', agent.address, '--usdc-per-day', '1', '--usdc-per-30-days', '2'].concat([
        '--expires',
        '7d',
        '--out',
        out,
        '--eth-now',
        eth,
        '--yes',
        '--force',
      ]);
    const tooMuch = await runCli(args('1.5'), s.home, { env: owner.env });
    expect([tooMuch.code, tooMuch.json().error.code]).toEqual([2, 'invalid_amount']);
    const before = await s.pub.getBalance({ address: agent.address });
    const killed = await runCli(args('0.01'), s.home, { env: { ...owner.env, LOOPSIGN_CRASH_AFTER: 'eth_now:signed:0' } });
    expect(killed.code, killed.stderr).toBe(-1);
    const again = await runCli(args('0.01'), s.home, { env: owner.env });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.json().ethNow).toMatchObject({ amount: '10000000000000000', resumed: true });
    const third = await runCli(args('0.01'), s.home, { env: owner.env });
    expect(third.code, third.stdout + third.stderr).toBe(0);
    expect(third.json().ethNow.resumed).toBe(false);
    // The chain's word: two transfers of 0.01 (the killed run's, settled by the rerun, and the third run's), not three.
    expect((await s.pub.getBalance({ address: agent.address })) - before).toBe(20_000_000_000_000_000n);
    const receipt = await s.pub.getTransactionReceipt({ hash: again.json().ethNow.transaction });
    console.log(`gas of the --eth-now transfer: ${receipt.gasUsed}`);
  });

  it('revoke --grant disables the LREP delegation too: an LREP-bounty ask is then refused (budget_revoked) and pulls nothing', async () => {
    const agent = await newAgent();
    const { out } = await grant(agent.address, '12', '100');
    expect((await runCli(['--json', 'budget', 'import', out], s.home, { env: agent.env })).code).toBe(0);
    const revoked = await runCli(['--json', 'budget', 'revoke', '--grant', out, '--yes'], s.home, { env: owner.env });
    expect(revoked.code, revoked.stdout + revoked.stderr).toBe(0);
    expect(revoked.json().transactions).toHaveLength(2);
    const shown = await runCli(['--json', 'budget', 'show', '--grant', out], s.home, { env: agent.env });
    expect(shown.json().grants.map((g: { asset: string; status: string }) => [g.asset, g.status])).toEqual([
      ['USDC', 'revoked_disabled'],
      ['LREP', 'revoked_disabled'],
    ]);
    const r = await runCli(['--json', 'ask', '--file', lrepAsk(2n * LREP), '--payment-mode', 'wallet_calls'], s.home, { env: agent.env });
    expect(r.code, r.stdout + r.stderr).toBe(5);
    expect(r.json().error.code).toBe('budget_revoked');
    expect((await lrepPulled(agent.address)).count).toBe(0);
  });
  // Red team (h16): the owner revokes with a copy of the grant file whose LREP delegation was removed (a USDC-only file
  // still signed by the owner). The recorded copy `budget grant` wrote names the LREP delegation: it must be disabled
  // too, never "revoked" while the LREP delegation still pulls.
  it('revoke --grant with the LREP delegation stripped from the file still disables the recorded LREP delegation', async () => {
    const agent = await newAgent();
    const { out } = await grant(agent.address, '12', '100');
    expect((await runCli(['--json', 'budget', 'import', out], s.home, { env: agent.env })).code).toBe(0);
    const doc = JSON.parse(readFileSync(out, 'utf8'));
    doc.delegations = doc.delegations.slice(0, 1);
    const stripped = path.join(s.home.dir, `stripped-${agent.address}.json`);
    writeFileSync(stripped, JSON.stringify(doc));
    const revoked = await runCli(['--json', 'budget', 'revoke', '--grant', stripped, '--yes'], s.home, { env: owner.env });
    if (revoked.code === 0) {
      expect(revoked.json().revoked).toBe(true);
      const shown = await runCli(['--json', 'budget', 'show', '--grant', out], s.home, { env: agent.env });
      expect(shown.json().grants.map((g: { asset: string; status: string }) => [g.asset, g.status])).toEqual([
        ['USDC', 'revoked_disabled'],
        ['LREP', 'revoked_disabled'],
      ]);
    }
    const r = await runCli(['--json', 'ask', '--file', lrepAsk(2n * LREP), '--payment-mode', 'wallet_calls'], s.home, { env: agent.env });
    expect(r.code, r.stdout + r.stderr).toBe(5);
    expect((await lrepPulled(agent.address)).count).toBe(0);
  });
  // Red team (h16): a run killed after signing a 0.02 ETH transfer, run again with --eth-now 0.01, settles the earlier
  // transfer and sends nothing more; its answer must say what was sent (0.02, the chain's word), not the 0.01 asked now.
  it('--eth-now rerun with another amount after a kill reports the amount the earlier run sent', async () => {
    const agent = await newAgent();
    const out = path.join(s.home.dir, `eth-amount-${agent.address}.json`);
    const args = (eth: string) =>
      ['--json', 'budget', 'grant', '--to', agent.address, '--usdc-per-day', '1', '--usdc-per-30-days', '2'].concat([
        '--expires',
        '7d',
        '--out',
        out,
        '--eth-now',
        eth,
        '--yes',
        '--force',
      ]);
    const before = await s.pub.getBalance({ address: agent.address });
    const killed = await runCli(args('0.02'), s.home, { env: { ...owner.env, LOOPSIGN_CRASH_AFTER: 'eth_now:signed:0' } });
    expect(killed.code, killed.stderr).toBe(-1);
    const again = await runCli(args('0.01'), s.home, { env: owner.env });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect((await s.pub.getBalance({ address: agent.address })) - before).toBe(20_000_000_000_000_000n);
    expect(again.json().ethNow).toMatchObject({ amount: '20000000000000000', resumed: true });
  });
  // Red team (h16, holds): the USDC and LREP delegations swapped between the file's entries (each still signed by the
  // owner, the asset labels kept) is refused at import: each entry's token is checked against the pinned one of its label.
  it('a grant file with its USDC and LREP delegations swapped is refused at import', async () => {
    const agent = await newAgent();
    const { out } = await grant(agent.address, '12', '100');
    const doc = JSON.parse(readFileSync(out, 'utf8'));
    const [u, l] = doc.delegations;
    doc.delegations = [
      { ...l, asset: 'USDC' },
      { ...u, asset: 'LREP' },
    ];
    const swapped = path.join(s.home.dir, `swapped-${agent.address}.json`);
    writeFileSync(swapped, JSON.stringify(doc));
    const r = await runCli(['--json', 'budget', 'import', swapped], s.home, { env: agent.env });
    expect(r.code, r.stdout + r.stderr).toBe(5);
    expect(r.json().error.code).toBe('budget_grant_caveats');
  });
});
