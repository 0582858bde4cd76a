// Red team (h14) on the owner's side of on-chain budgets (issue 38), through the built binary on the sandbox's anvil:
// the grant's EIP-7702 delegation raced by a second grant of the same owner, and by the owner's own --atomic ask
// between a killed grant and its rerun. Invariant: one authorization to the DeleGator at a time, never left on another
// delegate once the grant is done, and the ask pays once.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseAbi, parseTransaction, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filesUnder, makeHome, runCli } from './helpers/cli.js';
import { fundedWallet, openSession, type Session } from './helpers/chain.js';
import { recordedOfKind } from './helpers/store.js';
import { agentWithGrant, budgetAsk, budgetOwner, transfers, usdcOf, directAgent, directPull, grantArgs } from './helpers/budget.js';
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
const designator = (a: Hex) => `0xef0100${a.slice(2).toLowerCase()}`;

/** Every EIP-7702 authorization O signed that reached the chain, from O's mined transactions. */
async function authorizationsOnChain(owner: Hex) {
  const count = await s.pub.getTransactionCount({ address: owner });
  const head = await s.pub.getBlockNumber();
  const out: { address: string; nonce: number }[] = [];
  for (let b = 0n; b <= head; b++) {
    const block = await s.pub.getBlock({ blockNumber: b, includeTransactions: true });
    for (const tx of block.transactions) {
      if (tx.from.toLowerCase() !== owner.toLowerCase() || tx.type !== 'eip7702') continue;
      for (const a of tx.authorizationList ?? []) out.push({ address: a.address.toLowerCase(), nonce: a.nonce });
    }
  }
  return { count, authorizations: out };
}

describe('red team: the grant delegation raced', () => {
  it('two budget grant processes of one owner at once: one delegation transaction; a loser is refused (journal_locked, nothing signed) and its rerun grants', async () => {
    const owner = await fundedWallet(s.sb, s.pub);
    const [a1, a2] = [await directAgent(s), await directAgent(s)];
    const out1 = path.join(s.home.dir, `race-${randomBytes(4).toString('hex')}.json`);
    const out2 = path.join(s.home.dir, `race-${randomBytes(4).toString('hex')}.json`);
    const runs = [
      { agent: a1, out: out1 },
      { agent: a2, out: out2 },
    ];
    const results = await Promise.all(runs.map((r) => runCli(grantArgs(r.agent.account.address, r.out), s.home, { env: owner.env })));
    for (const [i, r] of results.entries()) {
      if (r.code === 0) continue;
      // Held: the second process waits for nothing and signs nothing; it says so, and its rerun grants.
      expect([r.code, r.json().error.code], r.stdout + r.stderr).toEqual([9, 'journal_locked']);
      expect(existsSync(runs[i]!.out)).toBe(false);
      const again = await runCli(grantArgs(runs[i]!.agent.account.address, runs[i]!.out), s.home, { env: owner.env });
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect(again.json().delegationTx).toBeUndefined();
    }
    console.log(`concurrent grants: exits ${results.map((r) => r.code).join(', ')}`);
    const { count, authorizations } = await authorizationsOnChain(owner.address);
    expect(authorizations).toEqual([{ address: contracts.deleGator!.toLowerCase(), nonce: 1 }]);
    expect(count).toBe(2);
    expect((await s.pub.getCode({ address: owner.address }))?.toLowerCase()).toBe(designator(contracts.deleGator!));
    const f1 = parseGrantFile(JSON.parse(readFileSync(out1, 'utf8')), out1);
    const f2 = parseGrantFile(JSON.parse(readFileSync(out2, 'utf8')), out2);
    expect(await directPull(s, a1, f1, 1n * USDC)).toBe('success');
    expect(await directPull(s, a2, f2, 1n * USDC)).toBe('success');
  });

  it("a grant killed after signing its delegation, the owner's --atomic ask, then the grant's rerun: the ask pays once, O ends on the DeleGator", async () => {
    const owner = await fundedWallet(s.sb, s.pub);
    const agent = await directAgent(s);
    const out = path.join(s.home.dir, `killed-then-ask-${randomBytes(4).toString('hex')}.json`);
    const killed = await runCli(grantArgs(agent.account.address, out), s.home, {
      env: { ...owner.env, LOOPSIGN_CRASH_AFTER: 'delegate:signed:' },
    });
    expect(killed.code, killed.stdout + killed.stderr).toBe(-1);
    const journaled = recordedOfKind(s.home, 'budget')
      .flatMap((o) => o.txs)
      .filter((t) => parseTransaction(t.raw as Hex).to?.toLowerCase() === owner.address.toLowerCase() && t.status === 'signed');
    expect(journaled).toHaveLength(1);

    // The owner's own atomic ask meanwhile (another process, same machine).
    const tag = `rt-owner-${process.pid}-${Date.now()}`;
    const file = s.home.file(
      `${tag}.json`,
      JSON.stringify({
        chainId: 31337,
        clientRequestId: tag,
        maxPaymentAmount: '1500000',
        bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
        question: { title: `Owner atomic ${tag}`, contextUrl: `https://example.com/rt/${tag}`, categoryId: '1', tags: ['budget'] },
      }),
    );
    const before = await balance(owner.address);
    const ask = await runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', '--atomic'], s.home, { env: owner.env });
    console.log(`owner's ask between the killed grant and its rerun: exit ${ask.code}\n${ask.stderr.slice(-1500)}`);
    expect(ask.code, ask.stdout + ask.stderr).toBe(0);
    expect(before - (await balance(owner.address))).toBe(1_500_000n);

    // The grant's rerun (as many times as it asks: its slot may have to be final first).
    let rerun = await runCli(grantArgs(agent.account.address, out), s.home, { env: owner.env });
    for (let i = 0; i < 3 && rerun.code === 4; i++) {
      console.log(`grant rerun exit 4: ${rerun.stderr.slice(-600)}`);
      await fetch(s.sb.info.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: ['0x80'] }),
      });
      rerun = await runCli(grantArgs(agent.account.address, out), s.home, { env: owner.env });
    }
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    expect((await s.pub.getCode({ address: owner.address }))?.toLowerCase()).toBe(designator(contracts.deleGator!));
    const { authorizations } = await authorizationsOnChain(owner.address);
    console.log(`authorizations of O on chain: ${JSON.stringify(authorizations)}`);
    // The killed grant's authorization (nonce 1) never reached the chain: its slot was cancelled by the ask.
    expect(authorizations.some((a) => a.nonce === 1 && a.address === contracts.deleGator!.toLowerCase())).toBe(false);
    expect(authorizations.at(-1)?.address).toBe(contracts.deleGator!.toLowerCase());
    expect(before - (await balance(owner.address))).toBe(1_500_000n);
    const f = parseGrantFile(JSON.parse(readFileSync(out, 'utf8')), out);
    expect(await directPull(s, agent, f, 1n * USDC)).toBe('success');
  });
});

async function grant(owner: Awaited<ReturnType<typeof fundedWallet>>, to: Hex) {
  const out = path.join(s.home.dir, `grant-${randomBytes(4).toString('hex')}.json`);
  const r = await runCli(grantArgs(to, out), s.home, { env: owner.env });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return { out, text: readFileSync(out, 'utf8'), file: parseGrantFile(JSON.parse(readFileSync(out, 'utf8')), out) };
}

async function anvil(method: string, params: unknown[]) {
  const res = await fetch(s.sb.info.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const doc = (await res.json()) as { error?: { message: string } };
  if (doc.error) throw new Error(`${method}: ${doc.error.message}`);
}

function atomicAskFile(name: string) {
  const tag = `${name}-${process.pid}-${Date.now()}`;
  return s.home.file(
    `${tag}.json`,
    JSON.stringify({
      chainId: 31337,
      clientRequestId: tag,
      maxPaymentAmount: '1500000',
      bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
      question: { title: `Owner atomic ${tag}`, contextUrl: `https://example.com/rt/${tag}`, categoryId: '1', tags: ['budget'] },
    }),
  );
}

describe("red team: the owner's atomic asks on a DeleGator", () => {
  it("a wallet delegated to an imitation (the DeleGator's very code at another address) is refused, nothing signed", async () => {
    const owner = await fundedWallet(s.sb, s.pub);
    const code = (await s.pub.getCode({ address: contracts.deleGator! }))!;
    const fake = `0x${randomBytes(20).toString('hex')}` as Hex;
    await anvil('anvil_setCode', [fake, code]);
    await anvil('anvil_setCode', [owner.address, designator(fake)]);
    const count = await s.pub.getTransactionCount({ address: owner.address });
    const before = await balance(owner.address);
    const r = await runCli(['--json', 'ask', '--file', atomicAskFile('imitation'), '--payment-mode', 'wallet_calls', '--atomic'], s.home, {
      env: owner.env,
    });
    expect(r.code, r.stdout + r.stderr).not.toBe(0);
    console.log(`imitation DeleGator: exit ${r.code} ${r.json().error?.code}`);
    expect(r.json().error.code).toBe('delegated_elsewhere');
    // The reservation is a plain transaction of its own; the payment's batch was never signed.
    expect(await balance(owner.address)).toBe(before);
    expect(await s.pub.getTransactionCount({ address: owner.address })).toBeLessThanOrEqual(count + 1);
  });

  it("the pinned DeleGator's code changed under an owner on it: the atomic ask is refused (budget_code_changed), nothing paid", async () => {
    const owner = await fundedWallet(s.sb, s.pub);
    const agent = await directAgent(s);
    await grant(owner, agent.account.address);
    const original = (await s.pub.getCode({ address: contracts.deleGator! }))!;
    // Loopsign's batch delegate's code (it supports the same execute and batch mode) in the DeleGator's place.
    const other = (await s.pub.getCode({ address: s.sb.info.batchDelegate as Hex }))!;
    await anvil('anvil_setCode', [contracts.deleGator, other]);
    try {
      const before = await balance(owner.address);
      const r = await runCli(['--json', 'ask', '--file', atomicAskFile('changed'), '--payment-mode', 'wallet_calls', '--atomic'], s.home, {
        env: owner.env,
      });
      console.log(`changed DeleGator code: exit ${r.code} ${r.json().error?.code}`);
      expect(r.json().error?.code, r.stdout + r.stderr).toBe('budget_code_changed');
      expect(await balance(owner.address)).toBe(before);
    } finally {
      await anvil('anvil_setCode', [contracts.deleGator, original]);
    }
  });
});

describe('red team: budget revoke --grant with a grant file that is not what the owner signed', () => {
  it('a copy with another salt (so another delegation hash) is refused, nothing sent; the real grant is not reported revoked while it still pulls', async () => {
    const owner = await fundedWallet(s.sb, s.pub);
    const agent = await directAgent(s);
    const g = await grant(owner, agent.account.address);
    const doc = JSON.parse(g.text);
    doc.delegations[0].delegation.salt = (BigInt(doc.delegations[0].delegation.salt) + 1n).toString();
    const tampered = s.home.file(`tampered-${randomBytes(4).toString('hex')}.json`, JSON.stringify(doc));
    const count = await s.pub.getTransactionCount({ address: owner.address });
    const r = await runCli(['--json', 'budget', 'revoke', '--grant', tampered, '--yes'], s.home, { env: owner.env });
    console.log(`revoke with a tampered file: exit ${r.code} ${JSON.stringify(r.json())}`);
    // The grant the owner signed stays redeemable whatever revoke did: it must not say it revoked anything.
    expect(await directPull(s, agent, g.file, 1n * USDC)).toBe('success');
    expect([r.code, r.json().error?.code], r.stdout + r.stderr).toEqual([5, 'budget_revoke_unsigned']);
    expect(await s.pub.getTransactionCount({ address: owner.address })).toBe(count);
  });

  it('--grant <id> whose recorded file was edited revokes that id or nothing, never another hash', async () => {
    const owner = await fundedWallet(s.sb, s.pub);
    const agent = await directAgent(s);
    const g = await grant(owner, agent.account.address);
    const id = g.file.delegations[0]!.hash;
    const recorded = filesUnder(s.home.dir).find((f) => f.endsWith(path.join('budget', 'grants', `${id}.json`)))!;
    const doc = JSON.parse(readFileSync(recorded, 'utf8'));
    doc.delegations[0].delegation.salt = (BigInt(doc.delegations[0].delegation.salt) + 1n).toString();
    writeFileSync(recorded, JSON.stringify(doc));
    const count = await s.pub.getTransactionCount({ address: owner.address });
    const r = await runCli(['--json', 'budget', 'revoke', '--grant', id, '--yes'], s.home, { env: owner.env });
    console.log(`revoke by id of an edited record: exit ${r.code} ${JSON.stringify(r.json())}`);
    expect(await directPull(s, agent, g.file, 1n * USDC)).toBe('success');
    expect([r.code, r.json().error?.code], r.stdout + r.stderr).toEqual([5, 'budget_revoke_unsigned']);
    expect(await s.pub.getTransactionCount({ address: owner.address })).toBe(count);
  });
});

describe('red team: budget revoke --all run again later', () => {
  it('a second --all after a grant signed elsewhere (another machine of the same owner) moves the nonce again: that grant stops', async () => {
    const owner = await fundedWallet(s.sb, s.pub);
    const [a1, a2] = [await directAgent(s), await directAgent(s)];
    const g1 = await grant(owner, a1.account.address);
    const first = await runCli(['--json', 'budget', 'revoke', '--all', '--yes'], s.home, { env: owner.env });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.json().nonce).toBe('1');
    expect(await directPull(s, a1, g1.file, 1n * USDC)).toBe('reverted');
    // The owner's other machine (its CI, a KMS box) grants a2 afterwards: that grant carries nonce 1, recorded there only.
    const other = makeHome();
    const out = path.join(other.dir, 'grant-elsewhere.json');
    const g2 = await runCli(grantArgs(a2.account.address, out), other, { env: owner.env });
    expect(g2.code, g2.stdout + g2.stderr).toBe(0);
    const f2 = parseGrantFile(JSON.parse(readFileSync(out, 'utf8')), out);
    expect(await directPull(s, a2, f2, 1n * USDC)).toBe('success');
    // Every grant, again, from the first machine.
    const again = await runCli(['--json', 'budget', 'revoke', '--all', '--yes'], s.home, { env: owner.env });
    console.log(`second revoke --all: exit ${again.code} ${JSON.stringify(again.json())}`);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(await directPull(s, a2, f2, 1n * USDC)).toBe('reverted');
    expect(again.json().nonce).toBe('2');
    expect(again.json().transaction).not.toBe(first.json().transaction);
  });
});

describe('red team: budget sweep racing an ask of the same session address (another process)', () => {
  it('each ask pays once and is never short; S ends with nothing above the float; O moved to S no more than the asks paid', async () => {
    const owner = await budgetOwner(s, 50n * USDC);
    const agent = await agentWithGrant(s, owner, '20', '50');
    // S starts with 3 USDC of its own (a leftover): the sweep wants it back, the ask wants to use it.
    await s.sb.control('/__sandbox/fund', { address: agent.address, usdc: '3000000' });
    const rounds = 3;
    for (let i = 0; i < rounds; i++) {
      const { file } = budgetAsk(s, '1.5');
      const [ask, sweep] = await Promise.all([
        runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'], s.home, { env: agent.env }),
        runCli(['--json', 'budget', 'sweep', '--yes'], s.home, { env: agent.env }),
      ]);
      console.log(
        `round ${i}: ask exit ${ask.code} ${ask.json().status ?? ask.json().error?.code}; sweep exit ${sweep.code} swept ${JSON.stringify(sweep.json().swept ?? sweep.json().error?.code)}`,
      );
      expect(ask.code, ask.stdout + ask.stderr).toBe(0);
      expect(ask.json().status).toBe('submitted');
      expect(sweep.code, sweep.stdout + sweep.stderr).toBe(0);
    }
    const final = await runCli(['--json', 'budget', 'sweep', '--yes'], s.home, { env: agent.env });
    expect(final.code, final.stdout + final.stderr).toBe(0);
    expect(await usdcOf(s, agent.address)).toBe(0n);
    const pulled = await transfers(s, owner.address, agent.address);
    const returned = await transfers(s, agent.address, owner.address);
    console.log(`O → S ${pulled.total} in ${pulled.count}; S → O ${returned.total} in ${returned.count}`);
    // What O lost in all is what the asks paid, less the 3 USDC S had of its own (returned to O by a sweep).
    expect(pulled.total - returned.total).toBe(BigInt(rounds) * 1_500_000n - 3_000_000n);
    expect(pulled.count).toBeLessThanOrEqual(rounds);
  });
});
