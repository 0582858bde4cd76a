// The two shapes of an ask and the rules across its fields (issue 36 §1): loopsign takes the live service's shape
// and the interface document's (seed) shape, which it translates; the JSON Schema MCP clients read describes both
// (bounty and roundConfig are `oneOf` the two, each fitting exactly one), states the rules across fields that JSON
// Schema can say (and describes the rest), and loopsign's check refuses each of them in the same answer as every
// other problem. The category list (ids 1 to 8, RateLoop's CategoryRegistry) is in the schema and in docs/ask.md.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { checkAskBody } from '../src/ask/ask-body.js';
import { UsageError } from '../src/errors.js';
import { askJsonSchema, CATEGORIES, categoryTable, clientAskSchema, isSeedShaped, shapeProblems } from '../src/protocol/ask-schema.js';
import { ROOT } from './helpers/cli.js';
import { NOW } from './helpers/corpus-asks.js';

const LIVE = {
  chainId: 8453,
  clientRequestId: 'shapes-live-1',
  maxPaymentAmount: '1500000',
  bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
  roundConfig: { questionDurationSeconds: '1200', minVoters: '3', maxVoters: '100' },
  question: { title: 'Is the checkout page clear?', contextUrl: 'https://example.com/checkout', categoryId: '3', tags: ['checkout'] },
};
/** The same ask as the interface document writes it (interface.md, "Ask: request shape"). */
const SEED = {
  chainId: 8453,
  clientRequestId: 'shapes-seed-1',
  walletAddress: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  paymentMode: 'wallet_calls',
  maxPaymentAmount: '1500000',
  bounty: {
    amount: '1500000',
    asset: 'USDC',
    requiredVoters: '3',
    requiredSettledRounds: '1',
    bountyStartBy: '0',
    bountyWindowSeconds: '1200',
    feedbackWindowSeconds: '1200',
  },
  roundConfig: { epochDuration: '1200', maxDuration: '1200', minVoters: '3', maxVoters: '100' },
  question: { title: 'Is the checkout page clear?', contextUrl: 'https://example.com/checkout', categoryId: '3', tags: ['checkout'] },
};

const schema = askJsonSchema();
const ajv = new Ajv({ strict: true, allowUnionTypes: true, allErrors: true });
const validate = ajv.compile(schema);

/** The problems loopsign's check names for a body (the same check quote and ask run), or [] when it takes it. */
function problems(body: unknown): { field: string; message: string; fix?: string }[] {
  try {
    checkAskBody(body, 'ask', NOW, undefined, { requireMaxPayment: true });
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as UsageError).details!.problems as { field: string; message: string; fix?: string }[];
  }
}

describe('two shapes, both described (oneOf)', () => {
  it('loopsign takes both (the seed ask translated); the JSON Schema accepts a correct ask of each, bounty and roundConfig each fitting exactly one branch', () => {
    expect(checkAskBody(LIVE, 'ask', NOW).translations).toEqual([]);
    const seed = checkAskBody(SEED, 'ask', NOW);
    expect(seed.translations.map((t) => t.field)).toEqual([
      'roundConfig.epochDuration/maxDuration',
      'bounty.requiredSettledRounds',
      'bounty.bountyStartBy',
      'bounty.bountyWindowSeconds',
      'bounty.feedbackWindowSeconds',
    ]);
    expect(seed.ask.roundConfig.questionDurationSeconds).toBe(1200);
    expect([isSeedShaped(LIVE), isSeedShaped(SEED)]).toEqual([false, true]);
    expect(validate(LIVE), JSON.stringify(validate.errors)).toBe(true);
    expect(validate(SEED), JSON.stringify(validate.errors)).toBe(true);
    const branches = (node: any) => (node.oneOf as any[]).map((b) => ajv.compile(b));
    const props = schema.properties as Record<string, any>;
    for (const [node, live, seed] of [
      [props.bounty, LIVE.bounty, SEED.bounty],
      [props.roundConfig, LIVE.roundConfig, SEED.roundConfig],
      [props.question.properties.roundConfig, LIVE.roundConfig, SEED.roundConfig],
    ] as const) {
      expect(node.oneOf.map((b: any) => b.title)).toEqual(['live shape', expect.stringMatching(/^interface \(seed\) shape/)]);
      const [liveBranch, seedBranch] = branches(node);
      expect([liveBranch!(live), seedBranch!(live)]).toEqual([true, false]);
      expect([liveBranch!(seed), seedBranch!(seed)]).toEqual([false, true]);
    }
    // Both examples in tools/list are valid: one of each shape.
    const examples = schema.examples as unknown[];
    expect(examples.map(isSeedShaped)).toEqual([false, true]);
    for (const example of examples) {
      expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
      expect(problems(example)).toEqual([]);
    }
    // An ask that fits neither is refused by both; loopsign names the field in the shape it is closer to.
    const wrongSeed = { ...SEED, bounty: { ...SEED.bounty, amount: '1.5' } };
    expect(validate(wrongSeed)).toBe(false);
    const found = problems(wrongSeed);
    expect(found.map((p) => p.field)).toEqual(['bounty.amount']);
    expect(found[0]!.message).toContain('did you mean "1500000"?');
    // The schema's own answer (before the normalizer's rules): the seed branch's problem, with its path, not "bounty".
    for (const body of [wrongSeed, { ...LIVE, bounty: { ...LIVE.bounty, amount: '1.5' } }])
      expect(shapeProblems(body, clientAskSchema).map((p) => [p.field, p.message.includes('did you mean "1500000"?')])).toEqual([
        ['bounty.amount', true],
      ]);
  });
});

describe('rules across fields: stated in the schema where JSON Schema can say them, reported all at once', () => {
  const image = `https://www.rateloop.ai/api/attachments/images/att_abcdefghijklmnop.webp#sha256=0x${'ab'.repeat(32)}`;
  const hosted = 'https://www.rateloop.ai/api/attachments/details/det_abcdefghijklmnop';
  const q = LIVE.question;
  const bundle = [q, { ...q, title: 'Is the cart page clear?' }];
  const { question: _, ...noQuestion } = LIVE;
  // [what, the ask, the field loopsign names]
  const stated: [string, Record<string, unknown>, string][] = [
    ['question and questions both', { ...LIVE, questions: bundle }, 'question'],
    ['neither question nor questions', noQuestion, 'question'],
    ['x402 for an LREP bounty', { ...LIVE, paymentMode: 'x402_authorization', bounty: { ...LIVE.bounty, asset: 'LREP' } }, 'paymentMode'],
    ['x402 for a bundle', { ...noQuestion, questions: bundle, paymentMode: 'x402_authorization' }, 'paymentMode'],
    [
      'x402 (as fundingMode) with an LREP bonus',
      { ...LIVE, fundingMode: 'x402', maxPaymentAmount: '1500000', feedbackBonus: { amount: '1000000', asset: 'LREP' } },
      'paymentMode',
    ],
    ['a feedback bonus on a bundle', { ...noQuestion, questions: bundle, feedbackBonus: { amount: '1000000' } }, 'feedbackBonus'],
    [
      'a video with images',
      { ...LIVE, question: { ...q, videoUrl: 'https://youtu.be/dQw4w9WgXcQ', imageUrls: [image] } },
      'question.videoUrl',
    ],
    ['nothing to look at', { ...LIVE, question: { title: q.title, categoryId: '1', tags: ['x'] } }, 'question'],
    [
      'a gated question with a contextUrl',
      {
        ...LIVE,
        question: { ...q, detailsUrl: hosted, detailsHash: `0x${'ab'.repeat(32)}`, confidentiality: { visibility: 'gated' } },
      },
      'question.confidentiality.visibility',
    ],
    ['a category outside 1 to 8', { ...LIVE, question: { ...q, categoryId: '9' } }, 'question.categoryId'],
    ['a bounty under 1 USDC', { ...LIVE, bounty: { ...LIVE.bounty, amount: '999999' } }, 'bounty.amount'],
  ];
  // Rules JSON Schema cannot say (they compare two values): in the fields' descriptions, and refused by loopsign.
  const described: [string, Record<string, unknown>, string, RegExp][] = [
    [
      'a spend cap under the bounty plus the bonus',
      { ...LIVE, feedbackBonus: { amount: '1000000', asset: 'USDC' } },
      'maxPaymentAmount',
      /at least the bounty plus a feedback bonus in the same asset/,
    ],
    [
      'minVoters other than requiredVoters',
      { ...LIVE, roundConfig: { ...LIVE.roundConfig, minVoters: '4' } },
      'roundConfig.minVoters',
      /equal to bounty\.requiredVoters/,
    ],
    [
      'too few voters for a large bounty',
      { ...LIVE, maxPaymentAmount: '1000000000', bounty: { amount: '1000000000', requiredVoters: '3' } },
      'bounty.requiredVoters',
      /at least 5 for a bounty of 1,000 USDC/,
    ],
  ];

  it.each(stated)('%s: the schema refuses it, and loopsign names that field', (_what, body, field) => {
    expect(validate(body)).toBe(false);
    expect(problems(body).map((p) => p.field)).toEqual([field]);
  });

  it("the rules JSON Schema cannot say (they compare values) are in the descriptions, and loopsign names each beside the ask's other problems", () => {
    for (const [what, body, field, words] of described) {
      expect(validate(body), `${what}: ${JSON.stringify(validate.errors)}`).toBe(true);
      const found = problems({ ...body, clientRequestId: 'x' });
      expect(
        found.map((p) => p.field),
        what,
      ).toEqual(['clientRequestId', field]);
      expect(found[1]!.fix, what).toMatch(words);
    }
  });

  it('one answer names every problem, the rules across fields among them (the live ask, the control, breaks none)', () => {
    expect(validate(LIVE), JSON.stringify(validate.errors)).toBe(true);
    expect(problems(LIVE)).toEqual([]);
    const body = {
      ...LIVE,
      clientRequestId: 'x',
      paymentMode: 'x402_authorization',
      maxPaymentAmount: '1000000',
      bounty: { amount: '1500000', asset: 'LREP', requiredVoters: '3' },
      question: { ...q, categoryId: '9', videoUrl: 'https://youtu.be/dQw4w9WgXcQ', imageUrls: [image] },
    };
    expect(validate(body)).toBe(false);
    const said = ajv.errorsText(validate.errors);
    for (const where of ['/clientRequestId', '/question/categoryId', '/question', '/bounty/asset']) expect(said).toContain(`data${where} `);
    expect(problems(body).map((p) => p.field)).toEqual([
      'clientRequestId',
      'question.videoUrl',
      'question.categoryId',
      'maxPaymentAmount',
      'paymentMode',
    ]);
  });
});

describe('the categories', () => {
  it('are ids 1 to 8, named, in the schema and in docs/ask.md', () => {
    expect(CATEGORIES.map((c) => c.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const description = (schema.properties as any).question.properties.categoryId.description as string;
    for (const c of CATEGORIES) expect(description).toContain(`${c.id} ${c.name}`);
    const DOC = path.join(ROOT, 'docs/ask.md');
    const page = readFileSync(DOC, 'utf8');
    const [before, rest] = page.split('<!-- categories:begin -->');
    expect(rest, 'docs/ask.md has the categories markers').toBeDefined();
    const [table, after] = rest!.split('<!-- categories:end -->');
    const expected = `\n${categoryTable()}\n`;
    if (process.env.LOOPSIGN_WRITE_DOCS === '1' && table !== expected)
      writeFileSync(DOC, `${before}<!-- categories:begin -->${expected}<!-- categories:end -->${after}`);
    else expect(table).toBe(expected);
  });
});
