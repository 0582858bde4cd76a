import { describe, expect, it } from 'vitest';
import { type Hex, type LocalAccount } from 'viem';
import type { Context } from '../src/context.js';
import { LoopsignError } from '../src/errors.js';
import { readRatingContext } from '../src/rate/flow.js';
import { acceptTermsAndFetch } from '../src/rate/gated.js';
import type { McpClient } from '../src/service/mcp.js';
import type { BuiltCommit } from '../src/vote/build.js';
import { checkRatingPlan } from '../src/wallet/rating-guard.js';
import { commitOf, corpusChain, rating } from './helpers/corpus-asks.js';

const chain = corpusChain();
const staked = rating.cases.find((c: { id: string }) => c.id === 'staked-no-allowance');
const commit: BuiltCommit = commitOf(staked);

/** The code and exit code a call fails with ('passed' when it does not fail; a non-loopsign exception is exit 1). */
async function outcome(f: () => unknown): Promise<{ code: string; exit: number }> {
  try {
    await f();
    return { code: 'passed', exit: 0 };
  } catch (error) {
    if (error instanceof LoopsignError) return { code: error.code, exit: error.exitCode };
    return { code: `exception: ${(error as Error).message}`, exit: 1 };
  }
}

const HOSTILE = ['0x10', 'abc', 7, 1.5, true, null, [], {}, [[{}]]];
/** Named cases: [the value as JSON, the value] (so that a title shows exactly what the case sends). */
const named = (values: unknown[]) => values.map((v) => [JSON.stringify(v) ?? 'undefined', v] as const);

describe('the rating plan (rateloop_prepare_rating_transactions)', () => {
  it('the corpus plan passes as it is (the mutations below are what fails)', () => {
    expect(checkRatingPlan(chain, staked.response.body, commit, 7n)).toHaveLength(2);
  });

  it.each(named(HOSTILE))('the whole answer = %s: refused (plan_refused, exit 5)', async (_, bad) => {
    expect(await outcome(() => checkRatingPlan(chain, bad, commit, 7n))).toEqual({ code: 'plan_refused', exit: 5 });
  });

  it.each(named(HOSTILE))('transactionPlan = %s: refused (plan_refused, exit 5)', async (_, bad) => {
    const answer = { ...staked.response.body, transactionPlan: bad };
    expect(await outcome(() => checkRatingPlan(chain, answer, commit, 7n))).toEqual({ code: 'plan_refused', exit: 5 });
  });

  it.each(named(HOSTILE))('transactionPlan.calls = %s: refused (plan_refused, exit 5)', async (_, bad) => {
    const answer = { ...staked.response.body, transactionPlan: { ...staked.response.body.transactionPlan, calls: bad } };
    expect(await outcome(() => checkRatingPlan(chain, answer, commit, 7n))).toEqual({ code: 'plan_refused', exit: 5 });
  });

  it.each(named(HOSTILE.filter((b) => b !== null)))('commit.ciphertextHash = %s: refused (plan_refused, exit 5)', async (_, bad) => {
    const answer = { ...staked.response.body, commit: { ...staked.response.body.commit, ciphertextHash: bad } };
    expect(await outcome(() => checkRatingPlan(chain, answer, commit, 7n))).toEqual({ code: 'plan_refused', exit: 5 });
  });
});

describe("the rating context's hints (rateloop_get_rating_context)", () => {
  const context = (runtime: unknown, content?: unknown) => ({ runtime, ...(content === undefined ? {} : { content }) });

  it.each(named(['403', 403, 0, null, undefined]))('runtime.targetRound = %s is a round number or none: read', (_, target) => {
    const r = readRatingContext(context({ targetRound: target }));
    expect(r.targetRound).toBe(target ?? undefined);
  });

  it.each(named(['0x10', ' 403', '403.0', '1e3', -1, 1.5, 2 ** 60, '9'.repeat(20), true, [], {}, [403]]))(
    'runtime.targetRound = %s: refused before anything is built (plan_refused, exit 5)',
    async (_, bad) => {
      expect(await outcome(() => readRatingContext(context({ targetRound: bad })))).toEqual({ code: 'plan_refused', exit: 5 });
    },
  );

  it.each(named([['gated'], 'gated', { contextAccess: ['gated'] }, null]))('content = %s is not gated content', (_, content) => {
    expect(readRatingContext(context({}, content)).gated).toBe(false);
  });

  it('a runtime, contracts or content that is not an object is no claim (the pinned values are used)', () => {
    for (const v of ['x', 7, [], null, true]) {
      const r = readRatingContext({ runtime: v, contracts: v, content: v });
      expect(r).toMatchObject({ targetRound: undefined, drandChainHash: undefined, contracts: undefined, gated: false });
    }
  });

  it.each(named([{}, [1], 7]))('runtime.drandChainHash = %s is compared as text (then refused as another network)', (_, hash) => {
    expect(readRatingContext(context({ drandChainHash: hash })).drandChainHash).toBe(String(hash));
  });
});

describe('gated content: the listed URLs and the read session', () => {
  const BASE = 'https://www.rateloop.ai';
  const args = { contentId: '7', chainId: 8453, walletAddress: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8' };
  const account = {} as LocalAccount;
  const wallet = args.walletAddress as Hex;
  // No person to ask and nothing printed: every case below ends before a terms text would be shown.
  const ctx = { out: { json: true } } as unknown as Context;
  const service = (answers: unknown[]) => {
    const calls: string[] = [];
    const mcp = {
      call: async (name: string) => {
        calls.push(name);
        return answers.shift() ?? {};
      },
    } as unknown as McpClient;
    return { mcp, calls };
  };
  const gated = (urls: unknown) => ({ content: { contextAccess: 'gated', gatedContext: { fetch: { urls } } } });

  it.each([
    ['a string', `${BASE}/api/attachments/details/det_1`],
    ['a number', 7],
    ['an object', { url: `${BASE}/api/attachments/details/det_1` }],
    ['true', true],
    ['[null]', [null]],
    ['[a string]', [`${BASE}/x`]],
    ['[[]]', [[]]],
    ['[true]', [true]],
    ['[{url: 7}]', [{ url: 7 }]],
    ['[{url: [url]}]', [{ url: [`https://evil.example/x`] }]],
  ])('urls = %s: refused before the terms are asked for (gated_url_refused, exit 5)', async (_what, urls) => {
    const { mcp, calls } = service([]);
    const r = await outcome(() =>
      acceptTermsAndFetch(ctx, mcp, account, wallet, args, gated(urls), { accept: true, serviceBaseUrl: BASE }),
    );
    expect(r).toEqual({ code: 'gated_url_refused', exit: 5 });
    expect(calls).toEqual([]);
  });

  it.each(named([7, true, [], {}, null, ['a=b'], 'a=b; c=d', 'a=b\r\nx-evil: 1', '']))(
    'signedReadSession.cookieHeader = %s: refused before anything is read (invalid_read_session, exit 3)',
    async (_, cookie) => {
      const { mcp } = service([{ status: 'accepted', signedReadSession: { cookieHeader: cookie } }]);
      const r = await outcome(() =>
        acceptTermsAndFetch(ctx, mcp, account, wallet, args, gated([]), { accept: true, serviceBaseUrl: BASE }),
      );
      expect(r).toEqual({ code: 'invalid_read_session', exit: 3 });
    },
  );

  it.each(named(['a=b', ['a=b'], 7, null]))(
    'signedReadSession = %s (not an object): no read session, nothing refused',
    async (_, session) => {
      const { mcp } = service([{ status: 'accepted', signedReadSession: session }]);
      const r = await acceptTermsAndFetch(ctx, mcp, account, wallet, args, gated([]), { accept: true, serviceBaseUrl: BASE });
      expect(r.context).toEqual([]);
    },
  );
});
