// Issue 38's proof: six agent processes on one wallet S, against the owner's 20 USDC/day grant, all at once; two are
// killed mid-flight (one right after its pull is mined, one after its x402 authorization is signed) and then run
// again; two ordered, two --atomic, two x402. The chain
// says: O lost exactly what the six asks paid and never more than 20 in the day, no ask pulled twice (one pull per
// ask), every question was submitted once, and nothing of O's money is left in S. A seventh ask past the cap is
// refused (budget_exhausted) before it signs anything.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startCli } from './helpers/cli.js';
import { openSession, submissionsTitled, type Session } from './helpers/chain.js';
import { agentWithGrant, budgetAsk, budgetOwner, transfers, usdcOf, USDC, type Agent, type Owner } from './helpers/budget.js';

let s: Session;
let owner: Owner;
let agent: Agent;

beforeAll(async () => {
  s = await openSession({ raters: false });
  owner = await budgetOwner(s, 100n * USDC);
  agent = await agentWithGrant(s, owner, '20', '100');
});
afterAll(async () => {
  await s.sb.stop();
});

describe('six agents on one wallet against a 20 USDC/day grant', () => {
  it('two killed mid-flight and run again: O loses what the asks paid (at most 20), one pull per ask, every ask pays once', async () => {
    const ownerBefore = await usdcOf(s, owner.address);
    const asks = Array.from({ length: 6 }, () => budgetAsk(s, '3'));
    // Two ordered, two --atomic (the pull inside the payment's batch), two x402 (the pull mined before the
    // authorization). Killed: an ordered one after its pull is mined (the money is in S, not yet paid: the others must
    // not spend it), and an x402 one after its authorization is signed. (A kill between an approval and its submit,
    // with other asks of the wallet running, ends in approval_replaced whatever pays: approvals set, not add; that is
    // not a budget's to solve.)
    const modes = [
      ['--payment-mode', 'wallet_calls'],
      ['--payment-mode', 'wallet_calls'],
      ['--payment-mode', 'wallet_calls', '--atomic'],
      ['--payment-mode', 'wallet_calls', '--atomic'],
      ['--payment-mode', 'x402_authorization'],
      ['--payment-mode', 'x402_authorization'],
    ];
    const crashAt: (string | undefined)[] = ['ask_pull:mined:0', undefined, undefined, undefined, 'ask:x402_signed', undefined];
    const args = (file: string, i: number) => ['--json', 'ask', '--file', file, ...modes[i]!];
    const first = await Promise.all(
      asks.map(
        (a, i) =>
          startCli(args(a.file, i), s.home, { env: { ...agent.env, ...(crashAt[i] ? { LOOPSIGN_CRASH_AFTER: crashAt[i] } : {}) } }).done,
      ),
    );
    first.forEach((r, i) => expect([i, r.code], r.stdout + r.stderr).toEqual([i, crashAt[i] ? -1 : 0]));
    const again = await Promise.all(asks.map((a, i) => (crashAt[i] ? runCli(args(a.file, i), s.home, { env: agent.env }) : undefined)));
    again.forEach((r, i) => r && expect([i, r.code], r.stdout + r.stderr).toEqual([i, 0]));

    for (const a of asks) expect([a.title, await submissionsTitled(s, a.title, agent.address)]).toEqual([a.title, 1]);
    const pulled = await transfers(s, owner.address, agent.address);
    // Six pulls of 3: the one killed after its pull reused it; none pulled the money another ask had pulled.
    expect([pulled.total, pulled.count]).toEqual([18n * USDC, 6]);
    expect(ownerBefore - (await usdcOf(s, owner.address))).toBe(18n * USDC);
    expect(await usdcOf(s, agent.address)).toBe(0n);

    // The seventh: 3 more would cross the day's 20 (2 left): refused before anything is signed.
    const nonce = await s.pub.getTransactionCount({ address: agent.address });
    const seventh = await runCli(args(budgetAsk(s, '3').file, 0), s.home, { env: agent.env });
    expect(seventh.code, seventh.stdout + seventh.stderr).toBe(5);
    expect(seventh.json().error).toEqual(expect.objectContaining({ code: 'budget_exhausted', available: '2000000', window: 'day' }));
    expect(await s.pub.getTransactionCount({ address: agent.address })).toBe(nonce);
    expect(ownerBefore - (await usdcOf(s, owner.address))).toBe(18n * USDC);
  });
});
