// The read-only lookups and their views (status, result, templates, confirm, quote) with a lying service (issue 23:
// `unknown` and parsers at the boundary): the documents are passed through to --json as they came, and what is read
// of them for people or for the wait is read field by field — a field of the wrong shape is shown as absent, never a
// TypeError (exit 1), and a poll interval that is not a number never turns the wait into a busy loop. In process,
// against a real HTTP server on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteAmounts } from '../src/ask/amounts-view.js';
import { resultDocument, statusDocument } from '../src/commands/lookups.js';
import { waitForReady } from '../src/ask/wait.js';
import { templates } from '../src/commands/lookups.js';
import { renderResult, renderStatus } from '../src/commands/render.js';
import type { Context } from '../src/context.js';
import { LoopsignError } from '../src/errors.js';
import { Output } from '../src/output.js';
import { ServiceClient } from '../src/service/client.js';
import { HttpClient } from '../src/service/http.js';
import { answerServer, type AnswerServer } from './helpers/answer-server.js';

let server: AnswerServer;
beforeAll(async () => {
  server = await answerServer();
});
afterAll(() => server.close());

const named = (values: unknown[]) => values.map((v) => [JSON.stringify(v) ?? 'undefined', v] as const);
const KEY = `0x${'ab'.repeat(32)}`;

function quietOut(json: boolean) {
  const printed: string[] = [];
  const sink = { write: (s: string) => (printed.push(s), true) } as unknown as NodeJS.WritableStream;
  const none = { write: () => true } as unknown as NodeJS.WritableStream;
  return { out: new Output({ json, quiet: true, debug: false }, { stdout: sink, stderr: none }), printed };
}

function attempt(f: () => unknown): string {
  try {
    return String(f());
  } catch (error) {
    return error instanceof LoopsignError ? error.code : `exception: ${(error as Error).message}`;
  }
}

describe('the status and result views (for people; --json passes the document through)', () => {
  it.each(named(['abc', 7, {}, true, [{ id: 1 }], [['7']]]))('contentIds = %s: shown as n/a, never a TypeError', (_, bad) => {
    const text = attempt(() => renderStatus({ status: 'submitted', operationKey: KEY, contentIds: bad }));
    expect(text).toMatch(/content {7}n\/a/);
  });

  it('contentIds that are ids are listed', () => {
    expect(renderStatus({ status: 'submitted', contentIds: ['7', 8] })).toMatch(/content {7}7, 8/);
  });

  it.each(named([{ up: null, down: 'x' }, { up: [], down: 7 }, 'distribution', 7, null]))(
    'distribution = %s: the counts read as 0',
    (_, bad) => {
      expect(attempt(() => renderResult({ answer: 'up', ready: true, distribution: bad }))).toMatch(/\(0 up, 0 down, 0 revealed\)/);
    },
  );
});

describe('the quote amounts', () => {
  it.each(named(['payment', 7, null, [{ totalAmount: '1000000', asset: 'USDC' }], { totalAmount: ['1000000'], asset: 'USDC' }]))(
    'payment = %s: no amount shown',
    (_, bad) => {
      expect(quoteAmounts({ payment: bad })).toEqual({});
    },
  );
});

describe('the quote amounts of an asset named like an Object.prototype member', () => {
  // TOKEN_DECIMALS[asset] read an inherited member ('constructor' is a function, '__proto__' an object): formatUnits
  // then threw, and `quote` ended as an internal error (exit 1) on a lying service's answer.
  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])('asset = %s: no amount shown', (asset) => {
    expect(quoteAmounts({ payment: { totalAmount: '1000000', asset }, maxPaymentAmountHint: '1000000' })).toEqual({});
  });
});

describe('`templates` for people', () => {
  const list = async (answer: unknown) => {
    server.answer = answer;
    const { out, printed } = quietOut(false);
    // templates() reads nothing of the chain's settings but asks for them.
    const ctx = {
      out,
      chainSettings: async () => ({}),
      service: async () => new ServiceClient(new HttpClient({ baseUrl: server.base, retries: 0 })),
    } as unknown as Context;
    try {
      await templates(ctx);
      return printed.join('');
    } catch (error) {
      return error instanceof LoopsignError ? error.code : `exception: ${(error as Error).message}`;
    }
  };

  it('the templates are listed with their required inputs', async () => {
    const text = await list({ templates: [{ id: 'go_no_go', title: 'Go?', templateInputsSchema: { required: ['action'] } }] });
    expect(text).toMatch(/go_no_go +Go\? {2}\(inputs: action\)/);
  });

  it.each(named(['abc', 7, { id: 'x' }, true]))('templates = %s: nothing listed, never a TypeError', async (_, bad) => {
    expect(await list({ templates: bad })).not.toMatch(/exception/);
  });

  it.each(named([[null], [7, 'x'], [[{ id: 'x' }]]]))('entries %s that are not objects are left out', async (_, bad) => {
    expect(await list({ templates: [...(bad as unknown[]), { id: 'generic_rating', title: 'Generic' }] })).toMatch(
      /^generic_rating +Generic/,
    );
  });

  it.each(named(['action', 7, [7, { k: 1 }], { 0: 'action' }]))(
    'templateInputsSchema.required = %s: only texts are named',
    async (_, bad) => {
      expect(await list({ templates: [{ id: 'go_no_go', title: 'Go?', templateInputsSchema: { required: bad } }] })).toMatch(
        /^go_no_go +Go\?\n?$/,
      );
    },
  );
});

describe('waiting for an ask', () => {
  it.each(named(['abc', [], true, -5, 1.5, { ms: 1000 }]))(
    'pollAfterMs = %s: the default interval, not a busy loop (one poll, then not ready within 1 s: exit 7)',
    async (_, bad) => {
      server.answer = { status: 'submitted', ready: false, terminal: false, pollAfterMs: bad };
      const before = server.requests.length;
      const { out } = quietOut(true);
      const service = new ServiceClient(new HttpClient({ baseUrl: server.base, retries: 0 }));
      const e = await waitForReady(service, KEY, out, { timeoutSeconds: 1 }).catch((x: unknown) => x);
      expect(e).toMatchObject({ code: 'wait_timeout', exitCode: 7 });
      expect(server.requests.length - before).toBe(1);
    },
  );
});

describe('amounts that reach raters after the frontend fee', () => {
  it("the quote's bounty and bonus less the escrows' 300 bps (rounded down as the escrows do), shown only for a checked form", () => {
    const q = {
      payment: { amount: '1500000', asset: 'USDC', bountyAmount: '1500000', feedbackBonusAmount: '333', feedbackBonusAsset: 'USDC' },
    };
    expect(quoteAmounts(q)).toMatchObject({
      bountyAfterFrontendFee: { atomic: '1455000', display: '1.455 USDC' },
      feedbackBonusAfterFrontendFee: { atomic: '324', display: '0.000324 USDC' },
    });
    expect(quoteAmounts({ payment: { amount: '1', asset: 'USDC', bountyAmount: '1e6' } }).bountyAfterFrontendFee).toBeUndefined();
  });

  // A status document as the service gives it (service-api.md §5.4: the ask's bounty, its feedback bonus), and a
  // result whose `operation` is that document.
  const status = {
    status: 'submitted',
    operationKey: KEY,
    contentIds: ['7'],
    bounty: { amount: '1500000', asset: 'USDC', bountyEligibility: '0' },
    feedbackBonus: { amount: '2000000', asset: 'LREP', status: 'funded' },
    payment: { amount: '1500000', asset: 'USDC', decimals: 6 },
  };
  const paid = {
    bounty: { atomic: '1500000', asset: 'USDC', display: '1.5 USDC' },
    feedbackBonus: { atomic: '2000000', asset: 'LREP', display: '2 LREP' },
    bountyAfterFrontendFee: { atomic: '1455000', asset: 'USDC', display: '1.455 USDC' },
    feedbackBonusAfterFrontendFee: { atomic: '1940000', asset: 'LREP', display: '1.94 LREP' },
  };

  it('status shows what the ask pays and what reaches raters after the 300 bps fee, as quote does (--json: amounts; text: the lines)', () => {
    expect(statusDocument(status, { finality: null, transactions: [] }).amounts).toEqual(paid);
    const text = renderStatus(status);
    expect(text).toMatch(/bounty +1\.5 USDC \(1\.455 USDC to raters after the 3 % frontend fee\)/);
    expect(text).toMatch(/bonus +2 LREP \(1\.94 LREP to raters after the 3 % frontend fee\)/);
    // No bonus asked: no bonus line; an amount of another form: not shown.
    const plain = { ...status, feedbackBonus: { enabled: false, status: 'not_requested' }, bounty: { amount: '1e6', asset: 'USDC' } };
    expect(statusDocument(plain, { finality: null, transactions: [] }).amounts).toEqual({});
    expect(renderStatus(plain)).not.toMatch(/bounty|bonus/);
  });

  it("result shows its ask's amounts the same way (from the result's operation; none for a result by content alone)", () => {
    const r = { answer: 'up', ready: true, distribution: { state: 1 }, operation: status };
    expect(resultDocument(r).amounts).toEqual(paid);
    expect(renderResult(r)).toMatch(/bounty +1\.5 USDC \(1\.455 USDC to raters after the 3 % frontend fee\)/);
    expect(resultDocument({ ...r, operation: null }).amounts).toEqual({});
    expect(renderResult({ ...r, operation: null })).not.toMatch(/bounty/);
  });
});
