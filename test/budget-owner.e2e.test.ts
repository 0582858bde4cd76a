// The owner's side of on-chain budgets (issue 38) through the built binary, on the sandbox's anvil with MetaMask's
// contracts: the grant's EIP-7702 delegation is a journaled transaction (killed after signing it, the rerun sends those
// very bytes; killed after it is mined, the rerun sends nothing more); the owner's own atomic ask still pays, through
// the DeleGator's batch execution; `budget revoke --grant` and `--all` stop grants on chain, and one agent's revoked
// grant leaves another's working until --all.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAbi, parseTransaction, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { fundedWallet, openSession, type Session } from './helpers/chain.js';
import { recordedOfKind } from './helpers/store.js';
import { directAgent, directPull, grantArgs } from './helpers/budget.js';
import { runOnPty, until } from './helpers/pty.js';
import { parseGrantFile } from '../src/budget/grant-file.js';

let s: Session;
let contracts: Record<string, Hex>;
let usdc: Hex;
beforeAll(async () => {
  s = await openSession({ raters: false });
  contracts = JSON.parse(readFileSync(path.join(s.sb.stateDir, 'manifest.json'), 'utf8')).delegation.contracts;
  usdc = s.sb.info.tokens.USDC.address as Hex;
});
afterAll(async () => {
  await s.sb.stop();
});

const USDC = 1_000_000n;
const erc20 = parseAbi(['function balanceOf(address) view returns (uint256)']);
const balance = async (who: Hex) =>
  (await s.pub.readContract({ address: usdc, abi: erc20, functionName: 'balanceOf', args: [who] })) as bigint;

type Owner = Awaited<ReturnType<typeof fundedWallet>>;

async function grant(owner: Owner, to: Hex, env: Record<string, string | undefined> = owner.env) {
  const out = path.join(s.home.dir, `grant-${randomBytes(4).toString('hex')}.json`);
  const r = await runCli(grantArgs(to, out), s.home, { env });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return { out, doc: r.json(), file: parseGrantFile(JSON.parse(readFileSync(out, 'utf8')), out) };
}

const designator = (a: Hex) => `0xef0100${a.slice(2).toLowerCase()}`;

describe("the grant's EIP-7702 delegation runs on the executor", () => {
  it('killed right after it is signed, the rerun sends those journaled bytes: one authorization, one transaction', async () => {
    const owner = await fundedWallet(s.sb, s.pub);
    const agent = await directAgent(s);
    const out = path.join(s.home.dir, 'grant-killed-signed.json');
    const killed = await runCli(grantArgs(agent.account.address, out), s.home, {
      env: { ...owner.env, LOOPSIGN_CRASH_AFTER: 'delegate:signed:' },
    });
    expect(killed.code, `the first run must be killed after signing the delegation\n${killed.stdout}${killed.stderr}`).toBe(-1);
    // Signed and journaled, never broadcast: the chain has nothing of it.
    expect(await s.pub.getTransactionCount({ address: owner.address })).toBe(0);
    const journaled = recordedOfKind(s.home, 'budget')
      .flatMap((o) => o.txs)
      .filter((t) => parseTransaction(t.raw as Hex).to?.toLowerCase() === owner.address.toLowerCase());
    expect(journaled).toHaveLength(1);
    expect(journaled[0]).toMatchObject({ stage: 'delegate', kind: 'batch+authorization', status: 'signed', nonce: 0 });

    const rerun = await runCli(grantArgs(agent.account.address, out), s.home, { env: owner.env });
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    expect(rerun.json().delegationTx).toBe(journaled[0]!.hash);
    expect(rerun.stderr).toContain(`re-broadcasting journaled transaction ${journaled[0]!.hash}`);
    // The transaction at nonce 0 and its authorization at nonce 1: nothing else was signed at a new nonce.
    expect(await s.pub.getTransactionCount({ address: owner.address })).toBe(2);
    expect((await s.pub.getCode({ address: owner.address }))?.toLowerCase()).toBe(designator(contracts.deleGator!));
    const receipt = await s.pub.getTransactionReceipt({ hash: journaled[0]!.hash as Hex });
    console.log(`gas of the grant's delegation transaction: ${receipt.gasUsed}`);
  });

  it('killed after it is mined, the rerun signs no second delegation and finishes the grant', async () => {
    const owner = await fundedWallet(s.sb, s.pub);
    const agent = await directAgent(s);
    const out = path.join(s.home.dir, 'grant-killed-mined.json');
    const killed = await runCli(grantArgs(agent.account.address, out), s.home, {
      env: { ...owner.env, LOOPSIGN_CRASH_AFTER: 'delegate:mined:' },
    });
    expect(killed.code, `the first run must be killed after the delegation is mined\n${killed.stdout}${killed.stderr}`).toBe(-1);
    expect(await s.pub.getTransactionCount({ address: owner.address })).toBe(2);
    const rerun = await runCli(grantArgs(agent.account.address, out), s.home, { env: owner.env });
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    expect(rerun.json().ownerCode).toBe('deleGator');
    expect(rerun.json().delegationTx).toBeUndefined();
    expect(await s.pub.getTransactionCount({ address: owner.address })).toBe(2);
  });
});

describe("the owner's own asks after a grant", () => {
  /** A 1.5 USDC ask of the owner's, --atomic. */
  async function atomicAsk(owner: Owner, name: string) {
    const tag = `${name}-${process.pid}-${Date.now()}`;
    const file = s.home.file(
      `${tag}.json`,
      JSON.stringify({
        chainId: 31337,
        clientRequestId: tag,
        maxPaymentAmount: '1500000',
        bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
        question: {
          title: `Owner atomic ${tag}`,
          contextUrl: `https://example.com/owner-atomic/${tag}`,
          categoryId: '1',
          tags: ['budget'],
        },
      }),
    );
    const before = await balance(owner.address);
    const r = await runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', '--atomic'], s.home, { env: owner.env });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const doc = r.json();
    expect(doc.status).toBe('submitted');
    expect(before - (await balance(owner.address))).toBe(1_500_000n);
    // The reservation, then one self-call carrying approve + submit: the payment is one transaction.
    expect(doc.transactions).toBe(2);
    const pay = await s.pub.getTransaction({ hash: doc.transactionHashes[1] });
    expect(pay.to?.toLowerCase()).toBe(owner.address.toLowerCase());
    expect(pay.input.slice(0, 10)).toBe('0xe9ae5c53'); // execute(bytes32,bytes)
    return pay;
  }

  it('an --atomic ask pays once, its approval and submit in one batch through the DeleGator that replaced the batch delegate', async () => {
    const owner = await fundedWallet(s.sb, s.pub);
    const agent = await directAgent(s);
    // Before any grant, the owner's atomic asks run on loopsign's batch delegate.
    await atomicAsk(owner, 'owner-before-grant');
    expect((await s.pub.getCode({ address: owner.address }))?.toLowerCase()).toBe(designator(s.sb.info.batchDelegate as Hex));
    const granted = await grant(owner, agent.account.address);
    expect(granted.doc.ownerCode).toBe('batchDelegate');
    const replaced = await s.pub.getTransactionReceipt({ hash: granted.doc.delegationTx });
    console.log(`gas of the grant's delegation transaction replacing the batch delegate: ${replaced.gasUsed}`);
    expect((await s.pub.getCode({ address: owner.address }))?.toLowerCase()).toBe(designator(contracts.deleGator!));
    const pay = await atomicAsk(owner, 'owner-after-grant');
    expect(pay.type).toBe('eip1559'); // no authorization: the DeleGator runs it
    // Still the DeleGator: the grant keeps working, the batch delegate was not put back.
    expect((await s.pub.getCode({ address: owner.address }))?.toLowerCase()).toBe(designator(contracts.deleGator!));
    expect(await directPull(s, agent, granted.file, 1n * USDC)).toBe('success');
  });
});

describe('budget revoke', () => {
  it('--grant stops one grant (show says revoked, a pull reverts), another agent keeps its own; --all stops every grant', async () => {
    const owner = await fundedWallet(s.sb, s.pub);
    const [a1, a2] = [await directAgent(s), await directAgent(s)];
    const g1 = await grant(owner, a1.account.address);
    const g2 = await grant(owner, a2.account.address);
    expect(await directPull(s, a1, g1.file, 1n * USDC)).toBe('success');
    expect(await directPull(s, a2, g2.file, 1n * USDC)).toBe('success');
    const id1 = g1.file.delegations[0]!.hash;

    // Without --yes and without a terminal, nothing is sent.
    const unconfirmed = await runCli(['--json', 'budget', 'revoke', '--grant', g1.out], s.home, { env: owner.env });
    expect(unconfirmed.code, unconfirmed.stdout + unconfirmed.stderr).toBe(5);
    expect(unconfirmed.json().error.code).toBe('budget_confirmation_required');
    // Neither or both targets: a usage error.
    const neither = await runCli(['--json', 'budget', 'revoke', '--yes'], s.home, { env: owner.env });
    expect([neither.code, neither.json().error.code]).toEqual([2, 'budget_revoke_target']);
    // The agent cannot revoke the owner's grant.
    const notOwner = await runCli(['--json', 'budget', 'revoke', '--grant', g1.out, '--yes'], s.home, {
      env: { ...owner.env, LOOPSIGN_PRIVATE_KEY: a1.key },
    });
    expect([notOwner.code, notOwner.json().error.code]).toEqual([2, 'budget_not_owner']);

    const one = await runCli(['--json', 'budget', 'revoke', '--grant', id1, '--yes'], s.home, { env: owner.env });
    expect(one.code, one.stdout + one.stderr).toBe(0);
    expect(one.json()).toMatchObject({ grant: id1, revoked: true, already: false });
    console.log(`gas of budget revoke --grant: ${one.json().gasUsed}`);
    const shown = await runCli(['--json', 'budget', 'show', '--grant', g1.out], s.home, { env: owner.env });
    expect(shown.json().grants[0].status).toBe('revoked_disabled');
    expect(await directPull(s, a1, g1.file, 1n * USDC)).toBe('reverted');
    // The second agent's grant is its own.
    expect(await directPull(s, a2, g2.file, 1n * USDC)).toBe('success');
    // Revoking it again sends nothing.
    const again = await runCli(['--json', 'budget', 'revoke', '--grant', g1.out, '--yes'], s.home, { env: owner.env });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.json()).toMatchObject({ already: true, transaction: null });

    const all = await runCli(['--json', 'budget', 'revoke', '--all', '--yes'], s.home, { env: owner.env });
    expect(all.code, all.stdout + all.stderr).toBe(0);
    expect(all.json().nonce).toBe('1');
    expect(all.json().revoked).toEqual(expect.arrayContaining([id1, g2.file.delegations[0]!.hash]));
    console.log(`gas of budget revoke --all: ${all.json().gasUsed}`);
    const after = await runCli(['--json', 'budget', 'show'], s.home, { env: owner.env });
    const mine = after.json().grants.filter((g: { owner: string }) => g.owner.toLowerCase() === owner.address.toLowerCase());
    expect(mine.map((g: { status: string }) => g.status).sort()).toEqual(['revoked_disabled', 'revoked_nonce']);
    expect(await directPull(s, a2, g2.file, 1n * USDC)).toBe('reverted');
    // A grant signed after --all carries the new nonce, and works.
    const g3 = await grant(owner, a2.account.address);
    expect(await directPull(s, a2, g3.file, 1n * USDC)).toBe('success');
  });

  it('on a terminal, the plan is shown and asked: n sends nothing, y revokes', async () => {
    const owner = await fundedWallet(s.sb, s.pub);
    const agent = await directAgent(s);
    const g = await grant(owner, agent.account.address);
    const count = await s.pub.getTransactionCount({ address: owner.address });
    const onTerminal = async (answer: string) => {
      const pty = runOnPty(['budget', 'revoke', '--grant', g.out], s.home, { ...owner.env, TERM: 'xterm-256color' });
      try {
        await until(pty.output, /Send this revocation\?/, 60_000);
        expect(pty.output()).toContain(g.file.delegations[0]!.hash);
        expect(pty.output()).toContain('disableDelegation');
        pty.type(answer);
        return { code: await pty.exited, output: pty.output() };
      } finally {
        pty.kill();
      }
    };
    const declined = await onTerminal('n\r');
    expect(declined.code, declined.output).toBe(5);
    expect(declined.output).toMatch(/declined at the prompt; nothing was signed or sent/);
    expect(await s.pub.getTransactionCount({ address: owner.address })).toBe(count);
    const accepted = await onTerminal('y\r');
    expect(accepted.code, accepted.output).toBe(0);
    expect(accepted.output).toMatch(/revoked in 0x[0-9a-f]{64}/);
    expect(await directPull(s, agent, g.file, 1n * USDC)).toBe('reverted');
  });

  it('--grant killed right after its transaction is signed: the rerun sends those journaled bytes, once', async () => {
    const owner = await fundedWallet(s.sb, s.pub);
    const agent = await directAgent(s);
    const g = await grant(owner, agent.account.address);
    const args = ['--json', 'budget', 'revoke', '--grant', g.out, '--yes'];
    const count = await s.pub.getTransactionCount({ address: owner.address });
    const killed = await runCli(args, s.home, { env: { ...owner.env, LOOPSIGN_CRASH_AFTER: 'revoke:signed:0' } });
    expect(killed.code, killed.stdout + killed.stderr).toBe(-1);
    expect(await s.pub.getTransactionCount({ address: owner.address })).toBe(count);
    const rerun = await runCli(args, s.home, { env: owner.env });
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    expect(rerun.json()).toMatchObject({ revoked: true, already: false });
    expect(rerun.stderr).toContain(`re-broadcasting journaled transaction ${rerun.json().transaction}`);
    expect(await s.pub.getTransactionCount({ address: owner.address })).toBe(count + 1);
    expect(await directPull(s, agent, g.file, 1n * USDC)).toBe('reverted');
  });

  it('--all killed after its transaction is mined: the rerun does not move the nonce again', async () => {
    const owner = await fundedWallet(s.sb, s.pub);
    const agent = await directAgent(s);
    await grant(owner, agent.account.address);
    const args = ['--json', 'budget', 'revoke', '--all', '--yes'];
    const killed = await runCli(args, s.home, { env: { ...owner.env, LOOPSIGN_CRASH_AFTER: 'all:0:mined:0' } });
    expect(killed.code, killed.stdout + killed.stderr).toBe(-1);
    const rerun = await runCli(args, s.home, { env: owner.env });
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    expect(rerun.json().nonce).toBe('1');
  });
});
