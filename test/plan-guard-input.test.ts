// What a lying service may put where the guards expect an amount, an object or an address (issue 23: `unknown` and
// parsers at the service boundary, so the compiler sees the checks). Every such answer is refused by a named check —
// never a parser's exception turned into "internal error" (exit 1), never passed. In process, on the live corpus.
import { describe, expect, it } from 'vitest';
import { checkPlan } from '../src/ask/check-plan.js';
import { corpus, corpusChain, NOW } from './helpers/corpus-asks.js';

const chain = corpusChain();
const accepted = corpus.cases.filter((c: { verdict: { accepted: boolean } }) => c.verdict.accepted);
const walletCase = accepted.find((c: { ask: { body: { paymentMode: string } } }) => c.ask.body.paymentMode === 'wallet_calls');
const x402Case = accepted.find((c: { x402?: unknown }) => c.x402 !== undefined);

// (null is an absent field: the guards then read the next one, as the service's own readers do.)
const BAD = ['abc', '1.5', '-1', '0x10', ' 1', {}, [], true, 1.5, 2 ** 60, '1'.repeat(90)];

async function verdict(ask: unknown, response: unknown) {
  const r = await checkPlan({ ask, response, chain, now: NOW }).then(
    (v) => ({
      passed: v.passed,
      failed: v.checks
        .filter((c) => !c.ok)
        .map((c) => c.detail)
        .join('; '),
    }),
    (e: Error & { exitCode?: number; code?: string }) => ({ passed: false, failed: `${e.code}: ${e.message}`, exitCode: e.exitCode }),
  );
  return r;
}

describe('malformed values where the guards read amounts and objects', () => {
  it('the corpus answers pass as they are (the mutations below are what fails)', async () => {
    expect((await verdict(walletCase.request.body, walletCase.ask.body)).passed).toBe(true);
    expect((await verdict(x402Case.request.body, x402Case.ask.body)).passed).toBe(true);
  });

  it.each(BAD)('payment.totalAmount = %j: refused by a check, not an exception', async (bad) => {
    const answer = structuredClone(walletCase.ask.body);
    answer.payment = { ...(answer.payment ?? {}), totalAmount: bad };
    const r = await verdict(walletCase.request.body, answer);
    expect(r.passed).toBe(false);
    expect('exitCode' in r ? r.exitCode : 5).not.toBe(1);
    expect(r.failed).toMatch(/not an integer amount|above maxPaymentAmount/);
  });

  it.each(BAD)('the x402 message value = %j: refused by a check, not an exception', async (bad) => {
    const answer = structuredClone(x402Case.ask.body);
    const td = answer.x402AuthorizationRequest.eip712 ?? answer.x402AuthorizationRequest.typedData;
    td.message.value = bad;
    const r = await verdict(x402Case.request.body, answer);
    expect(r.passed).toBe(false);
    expect('exitCode' in r ? r.exitCode : 5).not.toBe(1);
  });

  it.each(['a string', 7, [], null])('the wallet field = %j, the x402 request = %j: refused, never read as an object', async (bad) => {
    const w = structuredClone(walletCase.ask.body);
    w.wallet = bad;
    const r1 = await verdict(walletCase.request.body, w);
    const x = structuredClone(x402Case.ask.body);
    x.x402AuthorizationRequest = bad;
    const r2 = await verdict(x402Case.request.body, x);
    expect(r2.passed).toBe(false);
    for (const r of [r1, r2]) expect('exitCode' in r ? r.exitCode : 5).not.toBe(1);
  });
});
