// The live corpus through the built `check-plan` (issue 12 §2; test/fixtures/vectors/live/README.md): it passes real
// plans (exit 0, the kind named), refuses a tampered plan (exit 5, the failed check named) and a parse-rejected ask
// (exit 2, the field named), checks a bonus confirmation offline naming what only the chain proves, refuses an x402
// authorization another key signed, and checks a rating prepare. Every accepted answer is checked in-process by the
// function the command runs (test/corpus-asks.test.ts); spawning the binary for each of them checked that function
// once per answer, so here it runs on one answer of each kind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateKeyToAccount } from 'viem/accounts';
import { bonusPlan } from '../src/sandbox/service/plans.js';
import { capture } from './helpers/capture.js';
import { makeHome, runCli, type Home } from './helpers/cli.js';
import { acceptedAnswers, corpus, NOW, rating, ratingArgs, serviceField, type Case } from './helpers/corpus-asks.js';

const tally = new Map<string, number>();
const count = (k: string) => tally.set(k, (tally.get(k) ?? 0) + 1);
afterAll(() => {
  const n = (k: string) => tally.get(k) ?? 0;
  const line = `corpus asks, check-plan binary: ${n('check-plan-ok')} plans passed, ${n('check-plan-refused')} refused as expected`;
  console.log(line);
  capture.summary(line);
});

describe('the built check-plan on the corpus', () => {
  let home: Home;
  beforeAll(() => {
    home = makeHome();
  });
  const run = async (name: string, ask: unknown, response: unknown, extra: string[] = []) => {
    const a = home.file(`${name}-ask.json`, JSON.stringify(ask));
    const r = home.file(`${name}-answer.json`, JSON.stringify(response));
    return runCli(['--json', 'check-plan', '--ask', a, '--response', r, '--chain-id', '8453', '--now', String(NOW), ...extra], home);
  };

  it('passes an accepted ask plan, an x402 request and a signed x402 follow-up (exit 0, one of each kind)', async () => {
    const jobs = [...new Map(acceptedAnswers().map((job) => [job[3], job])).values()];
    expect(jobs.map((j) => j[3]).sort()).toEqual(['wallet_plan', 'x402_plan', 'x402_request']);
    for (const [name, ask, answer, kind] of jobs) {
      const r = await run(name, ask, answer);
      expect(r.code, `${name}: ${r.stdout}${r.stderr}`).toBe(0);
      expect(r.json()).toMatchObject({ ok: true, passed: true, kind });
      count('check-plan-ok');
    }
  });

  it('refuses a tampered plan (exit 5, the failed check named) and a parse-rejected ask (exit 2, the field named)', async () => {
    const c = corpus.cases.find((x: Case) => x.id === 'baseline-wallet-calls');
    const answer = structuredClone(c.ask.body);
    answer.transactionPlan.calls[1].data = answer.transactionPlan.calls[1].data.replace(/f4240$/, 'f4241');
    const r = await run('tampered', c.request.body, answer);
    expect(r.code).toBe(5);
    expect(r.json().error.checks.find((k: any) => !k.ok)).toMatchObject({ name: 'wallet_plan' });
    expect(r.json().error.message).toMatch(/approval of 1000001 instead of exactly 1000000/);
    count('check-plan-refused');
    for (const id of ['gated-with-external-context', 'target-audience-unknown-field']) {
      const p = corpus.cases.find((x: Case) => x.id === id);
      const res = await run(id, p.request.body, p.ask.body);
      expect(res.code, res.stdout).toBe(2);
      expect(res.json().error.field).toBe(serviceField(p));
      count('check-plan-refused');
    }
  });

  it('a bonus confirmation: checked offline against the file, with what only the chain proves named; a foreign awarder refused', async () => {
    const c = corpus.cases.find((x: Case) => x.id === 'bonus-usdc-wallet-calls');
    const m = corpus.meta.contracts;
    const plan = bonusPlan(
      { amount: 1_000_000n, asset: 'USDC', awarder: c.walletAddress.toLowerCase() },
      42n,
      1n,
      BigInt(NOW + 600),
      { ...m, batchExecutor: m.usdc } as never,
      false,
    );
    const answer = {
      status: 'submitted',
      contentIds: ['42'],
      feedbackBonus: {
        amount: '1000000',
        asset: 'USDC',
        contentId: '42',
        roundId: '1',
        feedbackClosesAt: String(NOW + 600),
        status: 'awaiting_wallet_signature',
        transactionPlan: plan,
      },
    };
    expect(c.request.body.feedbackBonus).toEqual({ amount: '1000000', asset: 'USDC' });
    const ok = await run('bonus', c.request.body, answer);
    expect(ok.code, ok.stdout).toBe(0);
    expect(ok.json()).toMatchObject({ kind: 'bonus_plan', passed: true, calls: 2 });
    expect(ok.json().needsChain[0]).toMatch(/question 42 is the one this wallet submitted/);
    count('check-plan-ok');
    const foreign = bonusPlan(
      { amount: 1_000_000n, asset: 'USDC', awarder: '0xbad000000000000000000000000000000000bad0' },
      42n,
      1n,
      BigInt(NOW + 600),
      { ...m, batchExecutor: m.usdc } as never,
      false,
    );
    const bad = await run('bonus-foreign', c.request.body, {
      ...answer,
      feedbackBonus: { ...answer.feedbackBonus, transactionPlan: foreign },
    });
    expect(bad.code).toBe(5);
    expect(bad.json().error.message).toMatch(/bonus_plan: .*awarder/);
    count('check-plan-refused');
  });

  it('an x402 follow-up whose authorization another key signed is refused (exit 5, x402_signer)', async () => {
    const c = corpus.cases.find((x: Case) => x.id === 'baseline-x402');
    const ask = structuredClone(c.x402.signedFollowUp.request.body);
    const other = privateKeyToAccount(`0x${'42'.repeat(32)}`);
    const typed = c.x402.authorizationRequest.eip712;
    ask.paymentAuthorization.signature = await other.signTypedData({
      ...typed,
      message: {
        ...typed.message,
        value: BigInt(typed.message.value),
        validAfter: BigInt(typed.message.validAfter),
        validBefore: BigInt(typed.message.validBefore),
      },
    });
    const r = await run('x402-other-signer', ask, c.x402.signedFollowUp.body);
    expect(r.code).toBe(5);
    expect(
      r
        .json()
        .error.checks.filter((k: any) => !k.ok)
        .map((k: any) => k.name),
    ).toEqual(expect.arrayContaining(['x402_signer']));
    count('check-plan-refused');
  });

  it("checks a rating prepare and says what only the voter's record can prove", async () => {
    const c = rating.cases.find((x: any) => x.id === 'staked-no-allowance');
    const r = await run('rating', ratingArgs(c), c.response.body);
    expect(r.code, r.stdout).toBe(0);
    expect(r.json()).toMatchObject({ kind: 'rating_plan', calls: 2 });
    expect(r.json().needsChain[0]).toMatch(/rate journal/);
    count('check-plan-ok');
  });
});
