// What `check-plan` (and the ask flow, for the templates) reads besides the plan itself: the service's template list,
// the rating request and the signed x402 authorization (issue 23: `unknown` and parsers at the boundary). A template
// the service lies about is refused (plan_refused, exit 5); a rating request or authorization that is not of its form
// is unusable input (exit 2) — never a parser's exception (exit 1), never a value read as something it is not (true as
// 1, [7] as 7). In process, on the live corpus.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeFunctionData, encodeFunctionData, erc20Abi, toHex } from 'viem';
import { votingEngineAbi } from '../src/protocol/abi.js';
import { checkPlan } from '../src/ask/check-plan.js';
import { LoopsignError } from '../src/errors.js';
import { readVector, VECTORS } from './helpers/cli.js';
import { corpus, corpusChain, NOW, rating } from './helpers/corpus-asks.js';

const templates = readVector('live/templates.json').body.templates;
const chain = corpusChain();
const walletCase = corpus.cases.find((c: { id: string }) => c.id === 'baseline-wallet-calls');
const x402Case = corpus.cases.find((c: { x402?: unknown; verdict: { accepted: boolean } }) => c.verdict.accepted && c.x402 !== undefined);
const staked = rating.cases.find((c: { id: string }) => c.id === 'staked-no-allowance');
const ratingArgs = { ...staked.request.arguments, ciphertext: toHex(readFileSync(path.join(VECTORS, 'sample-quicknet-round403.age'))) };

const named = (values: unknown[]) => values.map((v) => [JSON.stringify(v) ?? 'undefined', v] as const);

/** passed, failed (a check said no), or the code and exit code it threw with (a non-loopsign exception is exit 1). */
async function verdict(input: Partial<Parameters<typeof checkPlan>[0]>): Promise<{ code: string; exit: number }> {
  try {
    const r = await checkPlan({ ask: undefined, response: undefined, chain, now: NOW, ...input });
    return { code: r.passed ? 'passed' : 'failed', exit: r.passed ? 0 : 5 };
  } catch (error) {
    if (error instanceof LoopsignError) return { code: error.code, exit: error.exitCode };
    return { code: `exception: ${(error as Error).message}`, exit: 1 };
  }
}

describe("the service's template list (GET /api/agent/templates)", () => {
  const withGeneric = (patch: (t: Record<string, unknown>) => void) =>
    templates.map((t: Record<string, unknown>) => {
      const copy = structuredClone(t);
      if (t.id === 'generic_rating') patch(copy);
      return copy;
    });
  const run = (list: unknown) => verdict({ ask: walletCase.request.body, response: walletCase.ask.body, templates: { templates: list } });

  it('the corpus list passes as it is (the mutations below are what fails)', async () => {
    expect(await run(templates)).toEqual({ code: 'passed', exit: 0 });
  });

  it.each(named(['abc', '0x10', '1.5', true, [1], {}, -1, 1.5]))(
    'a version of %s: refused (plan_refused, exit 5), with or without the hash it states',
    async (_, bad) => {
      expect(await run(withGeneric((t) => (t.version = bad)))).toEqual({ code: 'plan_refused', exit: 5 });
      expect(
        await run(
          withGeneric((t) => {
            t.version = bad;
            delete t.resultSpecHash;
          }),
        ),
      ).toEqual({ code: 'plan_refused', exit: 5 });
    },
  );

  it.each(named([7, null, true, ['up'], { text: 'up' }]))(
    'voteSemantics.up = %s, with no hash stated: refused (plan_refused, exit 5), not hashed as it is',
    async (_, bad) => {
      const list = withGeneric((t) => {
        t.voteSemantics = { ...(t.voteSemantics as object), up: bad };
        delete t.resultSpecHash;
      });
      expect(await run(list)).toEqual({ code: 'plan_refused', exit: 5 });
    },
  );

  it.each(named(['x', 7, [], null]))('a list entry of %s is no template (the others still resolve)', async (_, bad) => {
    expect(await run([bad, ...templates])).toEqual({ code: 'passed', exit: 0 });
  });
});

describe('the rating request check-plan is given', () => {
  const run = (args: unknown) => verdict({ ask: args, response: staked.response.body });

  it('the corpus request passes as it is', async () => {
    expect(await run(ratingArgs)).toEqual({ code: 'passed', exit: 0 });
  });

  it.each([
    ['contentId', [7]],
    ['contentId', { n: 7 }],
    ['contentId', true],
    ['roundId', ['3']],
    ['roundReferenceRatingBps', null],
    ['roundReferenceRatingBps', ''],
    ['roundReferenceRatingBps', []],
    ['roundReferenceRatingBps', true],
    ['roundReferenceRatingBps', '0x10'],
    ['roundReferenceRatingBps', 1.5],
    ['stakeWei', [2500000]],
    ['targetRound', ['403']],
    ['frontend', ['0x0000000000000000000000000000000000000000']],
    ['drandChainHash', [ratingArgs.drandChainHash]],
  ])('%s = %j: unusable input (invalid_rating_request, exit 2)', async (field, bad) => {
    expect(await run({ ...ratingArgs, [field]: bad })).toEqual({ code: 'invalid_rating_request', exit: 2 });
  });
});

describe('a rating request whose numbers are JSON numbers beyond 2^53', () => {
  // JSON.parse rounds 10000000000000000001 to 1e19, whose digits pass /^\d+$/: a plan staking 1e19 (approval and
  // commit re-encoded for it) was "exactly the commit sent" for a request that asked for 1e19 + 1.
  const rounded = 10_000_000_000_000_000_000n;
  const body = structuredClone(staked.response.body);
  const [approve, commit] = body.transactionPlan.calls;
  const a = decodeFunctionData({ abi: erc20Abi, data: approve.data });
  approve.data = encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [a.args[0], rounded] });
  const c = decodeFunctionData({ abi: votingEngineAbi, data: commit.data });
  const args = [...(c.args as unknown[])];
  args[6] = rounded;
  commit.data = encodeFunctionData({ abi: votingEngineAbi, functionName: 'commitVote', args: args as never });
  const request = (field: string, digits: string) =>
    JSON.parse(JSON.stringify({ ...ratingArgs, [field]: 0 }).replace(`"${field}":0`, `"${field}":${digits}`));

  it('the plan re-encoded for the rounded stake passes a request that gives it in digits', async () => {
    expect(await verdict({ ask: { ...ratingArgs, stakeWei: rounded.toString() }, response: body })).toEqual({ code: 'passed', exit: 0 });
  });

  it.each([
    ['stakeWei', '10000000000000000001'],
    ['contentId', '9007199254740993'],
    ['roundId', '9007199254740993'],
    ['targetRound', '9007199254740993'],
  ])('%s = %s (a JSON number): unusable input (invalid_rating_request, exit 2), not read as another number', async (field, digits) => {
    expect(await verdict({ ask: request(field, digits), response: body })).toEqual({ code: 'invalid_rating_request', exit: 2 });
  });
});

describe('the signed x402 authorization a follow-up embeds', () => {
  const follow = x402Case.x402.signedFollowUp;
  const run = (auth: unknown) => verdict({ ask: { ...follow.request.body, paymentAuthorization: auth }, response: follow.body });
  const auth = follow.request.body.paymentAuthorization;

  it('the corpus follow-up passes as it is', async () => {
    expect(await run(auth)).toEqual({ code: 'passed', exit: 0 });
  });

  it.each([
    ['value', true],
    ['value', []],
    ['value', [1000000]],
    ['value', '0x10'],
    ['value', ' 1000000'],
    ['validBefore', true],
    ['validAfter', []],
    ['from', 7],
    ['from', [auth.from]],
    ['to', { address: auth.to }],
    ['nonce', 1],
    ['nonce', [auth.nonce]],
  ])('%s = %j: unusable input (authorization_required, exit 2)', async (field, bad) => {
    expect(await run({ ...auth, [field]: bad })).toEqual({ code: 'authorization_required', exit: 2 });
  });
});
