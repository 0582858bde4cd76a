// The ask's one schema (src/protocol/ask-schema.ts; issue 36 §1, §2): docs/ask.md's field table is rendered from it
// (this test fails when the page differs; LOOPSIGN_WRITE_DOCS=1 rewrites it), every ask of the vendored live corpus
// that the service accepted (or that loopsign translates from the seed shape) passes its JSON Schema and loopsign's
// check, and a bad ask is refused with every problem at once. Over MCP: test/mcp-ask-schema.test.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { checkAskBody } from '../src/ask/ask-body.js';
import { UsageError } from '../src/errors.js';
import { askFieldTable, askJsonSchema, askSchema, displayAmount } from '../src/protocol/ask-schema.js';
import * as z from 'zod';
import { ROOT } from './helpers/cli.js';
import { corpus, NOW, type Case } from './helpers/corpus-asks.js';

const DOC = path.join(ROOT, 'docs/ask.md');
const BEGIN = '<!-- ask-fields:begin -->';
const END = '<!-- ask-fields:end -->';

describe("docs/ask.md's field table", () => {
  it('is the one rendered from the schema', () => {
    const page = readFileSync(DOC, 'utf8');
    const [before, rest] = page.split(BEGIN);
    const [table, after] = rest!.split(END);
    const expected = `\n${askFieldTable()}\n`;
    if (process.env.LOOPSIGN_WRITE_DOCS === '1' && table !== expected) writeFileSync(DOC, `${before}${BEGIN}${expected}${END}${after}`);
    else expect(table).toBe(expected);
  });

  it('states the units of every amount, with a worked value', () => {
    for (const line of askFieldTable()
      .split('\n')
      .filter((l) => /`[a-zA-Z.]*(amount|Amount)`/.test(l)))
      expect(line).toMatch(/1 USDC = "1000000", 1\.5 USDC = "1500000"/);
  });
});

describe('the live corpus', () => {
  const ajv = new Ajv({ strict: true, allowUnionTypes: true });
  const client = ajv.compile(askJsonSchema());
  const service = ajv.compile(z.toJSONSchema(askSchema, { io: 'input', target: 'draft-7' }));
  it.each(corpus.cases.filter((c: Case) => c.verdict.accepted).map((c: Case) => [c.id, c]))(
    "%s: the ask the service accepted passes the schema and loopsign's check",
    (_id, c: Case) => {
      const body = c.request.body;
      const validate = body.maxPaymentAmount === undefined ? service : client;
      expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
      expect(() => checkAskBody(body, 'ask', NOW)).not.toThrow();
    },
  );

  it('the refused asks loopsign translates from the seed shape pass the schema as written (its seed fields included)', () => {
    const translated = corpus.cases.filter((c: Case) => {
      if (c.verdict.accepted) return false;
      try {
        return checkAskBody(c.request.body, 'ask', NOW).translations.length > 0;
      } catch {
        return false;
      }
    });
    expect(translated.length).toBeGreaterThan(0);
    for (const c of translated) expect(client(c.request.body), `${c.id}: ${JSON.stringify(client.errors)}`).toBe(true);
    expect(corpus.cases.filter((c: Case) => c.verdict.accepted).length).toBe(38);
  });
});

describe('a bad ask: every problem at once', () => {
  const problems = (body: unknown) => {
    try {
      checkAskBody(body, 'ask', NOW, undefined, { requireMaxPayment: true });
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      return (error as UsageError).details!.problems as { field: string; message: string; fix?: string }[];
    }
    throw new Error('accepted');
  };
  const good = {
    chainId: 8453,
    clientRequestId: 'weekly-check-1',
    maxPaymentAmount: '3000000',
    bounty: { amount: '3000000', asset: 'USDC', requiredVoters: '3' },
    question: { title: 'Weekly check', contextUrl: 'https://example.com/w', categoryId: '1', tags: ['weekly'] },
  };

  it('names each field once, the service-order first, with what to write there', () => {
    const found = problems({
      ...good,
      chainId: 1,
      bountee: {},
      bounty: { amount: '3 USDC' },
      question: { ...good.question, tags: [], categoryId: 'x' },
    });
    expect(found.map((p) => p.field)).toEqual(['bountee', 'chainId', 'bounty.amount', 'question.tags', 'question.categoryId']);
    expect(found[0]!.message).toBe('unknown top-level field "bountee"; did you mean "bounty"?');
    expect(found[2]!.message).toContain('did you mean "3000000"?');
    expect(found[2]!.fix).toMatch(/1 USDC = "1000000"/);
  });

  it('what the normalizer takes as absent (null, a false feedbackBonus) is accepted as before', () => {
    const body = {
      ...good,
      feedbackBonus: false,
      roundConfig: null,
      bounty: { ...good.bounty, requiredVoters: null },
      question: { ...good.question, detailsHash: null, targetAudience: null },
    };
    expect(checkAskBody(body, 'ask', NOW, undefined, { requireMaxPayment: true }).ask.bounty.requiredVoters).toBe(3);
  });

  it('display amounts: the atomic value they probably meant, never converted', () => {
    expect(displayAmount('1.5')).toEqual({ atomic: '1500000' });
    expect(displayAmount('1.5 USDC')).toEqual({ atomic: '1500000', asset: 'USDC' });
    expect(displayAmount(0.3)).toEqual({ atomic: '300000' });
    expect(displayAmount('0.0000001')).toBeUndefined();
    expect(displayAmount('abc')).toBeUndefined();
    // Whole tokens in a bounty too small to be anything else.
    expect(problems({ ...good, bounty: { amount: '3' } })[0]!.message).toContain('did you mean "3000000"?');
    // A display amount is never taken: the ask is refused.
    expect(problems({ ...good, bounty: { amount: '3.0' }, maxPaymentAmount: 3 }).map((p) => p.field)).toEqual([
      'bounty.amount',
      'maxPaymentAmount',
    ]);
  });
});

describe('an ask for another chain than the configured one', () => {
  const ask = (chainId: number) => {
    const c = corpus.cases.find((k: Case) => k.verdict.accepted && k.request.body.maxPaymentAmount !== undefined)!;
    return { ...c.request.body, chainId };
  };
  it('on the sandbox chain, the hint never points at another chain (issue 36: never production by accident)', async () => {
    const { loadAsk } = await import('../src/ask/prepare.js');
    const err = await loadAsk({ inline: ask(8453) }, 31337, undefined, undefined, { now: () => NOW * 1000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).code).toBe('chain_mismatch');
    expect((err as UsageError).hint).not.toMatch(/8453|--chain-id|LOOPSIGN_CHAIN_ID/);
    expect((err as UsageError).hint).toMatch(/31337/);
  });
  it('elsewhere, it names both ways out', async () => {
    const { loadAsk } = await import('../src/ask/prepare.js');
    const err = (await loadAsk({ inline: ask(31337) }, 8453, undefined, undefined, { now: () => NOW * 1000 }).catch(
      (e: unknown) => e,
    )) as UsageError;
    expect(err.code).toBe('chain_mismatch');
    expect(err.hint).toMatch(/to 8453.*--chain-id 31337/);
  });
});
