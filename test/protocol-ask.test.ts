// The ask derivations against the shared vectors (shared/vectors/README.md §1–2, §8).
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { normalizeAsk, defaultPaymentMode, sameAssetTotal, translateAsk, AskFieldError } from '../src/protocol/ask-normalize.js';
import {
  computeAskHashes,
  revealCommitment,
  walletBoundClientRequestId,
  x402Nonce,
  mediaHash,
  detailsTupleHash,
  textHash,
  rewardTermsHash,
  roundConfigHash,
  confidentialityHash,
  onChainQuestion,
  submissionKey,
} from '../src/protocol/ask-hashes.js';
import { TEMPLATES, resultSpecHash } from '../src/protocol/templates.js';
import { canonicalJson } from '../src/protocol/canonical.js';
import { readVector, VECTORS, TEST_ADDRESS, VECTOR_ASK_BODY } from './helpers/cli.js';

const vec = readVector('ask-keystore-eip3009.json');
const NOW = 1_795_348_800;
const reveal = readVector('reveal-metadata-tlock.json');
const resolver = (id: string, v: number) => {
  const t = TEMPLATES.find((x) => x.id === id)!;
  return resultSpecHash(id, v, t.voteSemantics);
};
const exampleBody = VECTOR_ASK_BODY;
const BASE = {
  contentRegistry: '0x1b0219e42e4C72A3eeBad1ef8578444c3523bcB3',
  questionRewardPoolEscrow: '0x88D82500425b6BD4f1CA68416D4Bc8835F028F31',
  x402QuestionSubmitter: '0xfA8249aef34655867D9f29AbE3CD6d298B5EE17E',
} as const;

describe('ask hashing vectors', () => {
  const ask = normalizeAsk(exampleBody);

  it('derives the wallet-bound clientRequestId', () => {
    expect(walletBoundClientRequestId(8453, TEST_ADDRESS, 'local-signer-test')).toBe(vec.walletBoundClientRequestId);
  });

  it.each([
    ['raw_clientRequestId_defaultMetaBase', 'local-signer-test', undefined],
    ['raw_clientRequestId_ponderMetaBase', 'local-signer-test', 'https://ponder.rateloop.ai'],
    ['walletBound_clientRequestId_defaultMetaBase', undefined, undefined],
  ])('reproduces %s byte for byte', (key, effective, base) => {
    const expected = vec[key];
    const h = computeAskHashes(ask, TEST_ADDRESS, resolver, { metadataBase: base, effectiveClientRequestId: effective });
    expect(h.canonicalJson).toBe(expected.canonicalJson);
    expect(h.payloadHash).toBe(expected.payloadHash);
    expect(h.operationKey).toBe(expected.operationKey);
    expect(h.questions[0]!.questionMetadataHash).toBe(expected.questionMetadataHash);
    expect(h.questions[0]!.questionMetadataUri).toBe(expected.questionMetadataUri);
    expect(h.questions[0]!.resultSpecHash).toBe(expected.resultSpecHash);
    expect(h.questions[0]!.submissionKey).toBe(expected.submissionKey);
    expect(h.salts[0]).toBe(expected.salt);
    const nonce = x402Nonce(ask, h, BASE, {
      from: TEST_ADDRESS,
      to: BASE.x402QuestionSubmitter,
      value: 1500000n,
      validAfter: 0n,
      validBefore: 1800000000n,
    });
    expect(nonce).toBe(expected.x402Nonce_base_validBefore_1800000000);
  });

  it('reproduces the component hashes and both reveal commitments', () => {
    const q = ask.questions[0]!;
    expect(mediaHash(q)).toBe(reveal.mediaHash_empty);
    expect(detailsTupleHash(q)).toBe(reveal.detailsHash_empty);
    expect(textHash(q)).toBe(reveal.textHash);
    expect(rewardTermsHash(ask.bounty)).toBe(reveal.rewardTermsHash_usdc_1500000_3_0);
    expect(roundConfigHash(ask.roundConfig)).toBe(reveal.roundConfigHash_1200_1200_3_100);
    expect(confidentialityHash(q)).toBe(reveal.confHashPublic);
    const gated = { ...q, confidentiality: { visibility: 'gated' as const, disclosurePolicy: 'private_forever' as const, bond: null } };
    expect(confidentialityHash(gated)).toBe(reveal.confHashPrivateForever);
    const raw = computeAskHashes(ask, TEST_ADDRESS, resolver, { effectiveClientRequestId: 'local-signer-test' });
    expect(revealCommitment(ask, raw, TEST_ADDRESS)).toBe(reveal.revealCommitment_rawSalt);
    const bound = computeAskHashes(ask, TEST_ADDRESS, resolver);
    expect(revealCommitment(ask, bound, TEST_ADDRESS)).toBe(reveal.revealCommitment_walletBoundSalt);
  });

  it('reproduces the canonical metadata and result-spec preimages', () => {
    expect(canonicalJson(JSON.parse(reveal.questionMetadataCanonical))).toBe(reveal.questionMetadataCanonical);
    const generic = TEMPLATES.find((t) => t.id === 'generic_rating')!;
    expect(resultSpecHash('generic_rating', 1, generic.voteSemantics)).toBe(reveal.resultSpecHash_generic);
  });
});

describe('the 20 example asks', () => {
  const files = readdirSync(path.join(VECTORS, 'asks')).filter((f) => f.endsWith('.json'));
  const expectedDefault: Record<string, string> = {
    'answer-variant-safety-review.json': 'wallet_calls',
    'generated-image-choice.json': 'wallet_calls',
  };

  it('has 20 files', () => expect(files).toHaveLength(20));

  it.each(files)('%s parses, keeps templateInputs order, and its spend cap is exact', (file) => {
    const text = readFileSync(path.join(VECTORS, 'asks', file), 'utf8');
    const body = JSON.parse(text);
    const ask = normalizeAsk(body);
    expect(translateAsk(body, NOW).translations).toEqual([]);
    expect(sameAssetTotal(ask)).toBe(BigInt(body.maxPaymentAmount));
    expect(defaultPaymentMode(ask)).toBe(expectedDefault[file] ?? 'x402_authorization');
    const q0 = body.question ?? body.questions[0];
    if (q0.templateInputs) expect(Object.keys(ask.questions[0]!.templateInputs!)).toEqual(Object.keys(q0.templateInputs));
    const lowered = { ...body, maxPaymentAmount: (BigInt(body.maxPaymentAmount) - 1n).toString() };
    expect(() => normalizeAsk(lowered)).toThrow(AskFieldError);
    if (ask.isBundle) expect(() => normalizeAsk({ ...body, paymentMode: 'x402_authorization' })).toThrow(/single-question/);
  });
});

describe('local validation names the field', () => {
  const bad: [string, (b: any) => void, RegExp][] = [
    ['minVoters differs', (b) => (b.roundConfig.minVoters = '4'), /roundConfig\.minVoters/],
    ['amount not a string', (b) => (b.bounty.amount = 1500000), /bounty\.amount/],
    [
      '1000 USDC with 3 voters',
      (b) => ((b.bounty.amount = '1000000000'), (b.maxPaymentAmount = '1000000000')),
      /bounty\.requiredVoters: must be at least 5/,
    ],
    [
      '10000 USDC with 5 voters',
      (b) => (
        (b.bounty.amount = '10000000000'),
        (b.maxPaymentAmount = '10000000000'),
        (b.bounty.requiredVoters = '5'),
        (b.roundConfig.minVoters = '5')
      ),
      /at least 8/,
    ],
    ['bonus asset', (b) => (b.feedbackBonus = { amount: '1', asset: 'ETH' }), /feedbackBonus\.asset/],
    [
      'details hash',
      (b) => ((b.question.detailsUrl = 'https://example.com/d'), (b.question.detailsHash = '0x12')),
      /question\.detailsHash/,
    ],
    [
      'gated with contextUrl',
      (b) => (b.question.confidentiality = { visibility: 'gated' }),
      /question\.confidentiality\.visibility: gated requires a service-hosted detailsUrl; external contextUrl/,
    ],
    [
      'gated with an external detailsUrl',
      (b) => (
        (b.question.contextUrl = undefined),
        (b.question.detailsUrl = 'https://example.com/d'),
        (b.question.detailsHash = '0x' + 'ab'.repeat(32)),
        (b.question.confidentiality = { visibility: 'gated' })
      ),
      /question\.detailsUrl: must be a service-hosted details attachment/,
    ],
    ['maxVoters below minVoters', (b) => (b.roundConfig.maxVoters = '2'), /roundConfig\.maxVoters: must be at least minVoters \(3\)/],
    ['preset with roundConfig', (b) => (b.roundPreset = 'pure_agent_fast'), /roundPreset: cannot be combined with roundConfig/],
    [
      'unknown preset',
      (b) => ((b.roundConfig = undefined), (b.question.roundPreset = 'turbo')),
      /question\.roundPreset: must be one of pure_agent_fast or default/,
    ],
    ['title too long', (b) => (b.question.title = 'x'.repeat(121)), /question\.title: must be 120 characters or fewer/],
    [
      'unknown targetAudience field',
      (b) => (b.question.targetAudience = { ageRanges: ['25_34'] }),
      /question\.targetAudience\.ageRanges: is not a supported targetAudience field \(use ageGroups/,
    ],
    [
      'bad country code',
      (b) => (b.question.targetAudience = { countries: ['USA'] }),
      /question\.targetAudience\.countries: "USA" is not an ISO-3166/,
    ],
    [
      'image without its hash fragment',
      (b) => (b.question.imageUrls = ['https://www.rateloop.ai/api/attachments/images/att_abcdefghijklmnop.webp']),
      /question\.imageUrls\[0\]: must end in the fragment/,
    ],
    ['video not on YouTube', (b) => (b.question.videoUrl = 'https://vimeo.com/1'), /question\.videoUrl: must be a supported YouTube URL/],
    ['missing categoryId', (b) => delete b.question.categoryId, /question\.categoryId: is required/],
    ['chain', (b) => (b.chainId = 1), /chainId/],
    ['image url', (b) => (b.question.imageUrls = ['https://example.com/a.png']), /question\.imageUrls\[0\]/],
    [
      'image hash fragment',
      (b) => (b.question.imageUrls = ['https://www.rateloop.ai/api/attachments/images/att_abcdefghijklmnop.webp#sha256=0x12']),
      /fragment/,
    ],
  ];
  it.each(bad)('%s', (_n, mutate, message) => {
    const body = structuredClone(exampleBody) as any;
    mutate(body);
    expect(() => normalizeAsk(body)).toThrow(message);
  });

  it('requires a template input the service requires (head_to_head_ab), and only those', () => {
    const body = structuredClone(exampleBody) as any;
    body.question.templateId = 'head_to_head_ab';
    body.question.templateInputs = { optionAKey: 'A', optionALabel: 'first', optionBKey: 'B' };
    expect(() => normalizeAsk(body, { templates: TEMPLATES })).toThrow(/question\.templateInputs\.optionBLabel/);
    body.question.templateId = 'feature_acceptance_test';
    body.question.templateInputs = { acceptanceCriteria: 'a' };
    expect(normalizeAsk(body, { templates: TEMPLATES }).questions[0]!.templateInputs).toEqual({ acceptanceCriteria: 'a' });
  });

  it('normalises context and image URLs as the service does', () => {
    const body = structuredClone(exampleBody) as any;
    body.question.contextUrl = 'https://www.Example.com/a/b/?q=1';
    const img = 'https://www.rateloop.ai/api/attachments/images/att_abcdefghijklmnop.webp#sha256=0x' + 'AB'.repeat(32);
    body.question.imageUrls = [img, img];
    const q = normalizeAsk(body).questions[0]!;
    expect(q.contextUrl).toBe('https://example.com/a/b?q=1');
    expect(q.imageUrls).toEqual([img.replace('AB'.repeat(32), 'ab'.repeat(32))]);
    body.question.contextUrl = 'https://youtu.be/dQw4w9WgXcQ';
    expect(normalizeAsk(body).questions[0]!.contextUrl).toBe('https://www.youtube.com/watch?v=dQw4w9WgXcQ');
  });
});

describe('what the service records (the live corpus rules, item 3.4, 3.5, 3.7)', () => {
  const q = (question: Record<string, unknown>, top: Record<string, unknown> = {}) => {
    const body = structuredClone(exampleBody) as any;
    Object.assign(body.question, question);
    Object.assign(body, top);
    return normalizeAsk(body);
  };

  it.each([
    ['https://example.com', 'https://example.com/'],
    ['https://www.example.com/', 'https://example.com/'],
    ['https://example.com:8443/pricing', 'https://example.com/pricing'],
    ['https://EXAMPLE.com/Path/Case?Q=Keep#frag', 'https://example.com/Path/Case?Q=Keep'],
    ['https://music.youtube.com/watch?v=dQw4w9WgXcQ&list=x', 'https://www.youtube.com/watch?v=dQw4w9WgXcQ'],
    ['https://www.youtube.com/embed/dQw4w9WgXcQ?start=3', 'https://www.youtube.com/watch?v=dQw4w9WgXcQ'],
    ['https://youtu.be/dQw4w9WgXcQ/extra', 'https://www.youtube.com/watch?v=dQw4w9WgXcQ'],
    ['https://youtube.com/watch', 'https://youtube.com/watch'],
  ])('contextUrl %s → %s', (given, recorded) => expect(q({ contextUrl: given }).questions[0]!.contextUrl).toBe(recorded));

  it('videoUrl is kept as given; a direct image is not a contextUrl', () => {
    expect(q({ contextUrl: undefined, videoUrl: 'https://youtu.be/dQw4w9WgXcQ' }).questions[0]!.videoUrl).toBe(
      'https://youtu.be/dQw4w9WgXcQ',
    );
    expect(() => q({ contextUrl: 'https://example.com/a.PNG' })).toThrow(/question\.contextUrl: must be a page/);
  });

  it('title trimmed, detailsHash case kept (hashes case-blind), detailsUrl host lower-cased', () => {
    const hash = '0x' + 'AB'.repeat(32);
    const ask = q({ title: '  Should this agent proceed?  ', detailsUrl: 'https://WWW.Example.COM/Details/X', detailsHash: hash });
    expect(ask.questions[0]!.title).toBe('Should this agent proceed?');
    expect(ask.questions[0]!.detailsHash).toBe(hash);
    expect(ask.questions[0]!.detailsUrl).toBe('https://www.example.com/Details/X');
    expect(detailsTupleHash(ask.questions[0]!)).toBe(
      detailsTupleHash({ ...ask.questions[0]!, detailsHash: hash.toLowerCase() as `0x${string}` }),
    );
  });

  it('targetAudience: fixed field order, values trimmed and de-duplicated in order, country codes upper-cased, empty → null', () => {
    const ask = q({
      targetAudience: {
        roles: ['founder', 'founder'],
        team: { countries: ['de'], sizes: [] },
        countries: [' us ', 'DE', 'us'],
        ageGroups: ['25-34'],
      },
    });
    expect(ask.questions[0]!.targetAudience).toEqual({
      ageGroups: ['25-34'],
      countries: ['US', 'DE'],
      roles: ['founder'],
      team: { countries: ['DE'] },
    });
    expect(Object.keys(ask.questions[0]!.targetAudience!)).toEqual(['ageGroups', 'countries', 'roles', 'team']);
    expect(q({ targetAudience: { roles: [] } }).questions[0]!.targetAudience).toBeNull();
  });

  it('round settings on the question apply when the top level has none; pure_agent_fast is 60 s with 3/3 voters', () => {
    expect(q({ roundConfig: { questionDurationSeconds: '3600', maxVoters: '50' } }, { roundConfig: undefined }).roundConfig).toEqual({
      questionDurationSeconds: 3600,
      epochDuration: 3600,
      maxDuration: 3600,
      minVoters: 3,
      maxVoters: 50,
    });
    expect(q({ roundPreset: 'Pure-Agent Fast' }, { roundConfig: undefined }).roundConfig).toEqual({
      questionDurationSeconds: 60,
      epochDuration: 60,
      maxDuration: 60,
      minVoters: 3,
      maxVoters: 3,
    });
    expect(q({ roundPreset: 'standard' }, { roundConfig: undefined }).roundConfig).toMatchObject({
      questionDurationSeconds: 1200,
      minVoters: 3,
      maxVoters: 100,
    });
    // The top level wins over the question.
    expect(q({ roundConfig: { questionDurationSeconds: '3600' } }).roundConfig.questionDurationSeconds).toBe(1200);
  });

  it('gated: a zero LREP bond when none is given; the URLs blanked on chain only, the detailsHash kept', () => {
    const hosted = 'https://www.rateloop.ai/api/attachments/details/det_abcdefghijklmnop';
    const image = 'https://www.rateloop.ai/api/attachments/images/att_abcdefghijklmnop.webp#sha256=0x' + 'ab'.repeat(32);
    const ask = q({
      contextUrl: undefined,
      detailsUrl: hosted,
      detailsHash: '0x' + 'cd'.repeat(32),
      imageUrls: [image],
      confidentiality: { visibility: 'gated' },
    });
    const question = ask.questions[0]!;
    expect(question.confidentiality).toEqual({
      bond: { amount: '0', asset: 'LREP' },
      disclosurePolicy: 'private_forever',
      visibility: 'gated',
    });
    expect(question.detailsUrl).toBe(hosted);
    expect(onChainQuestion(question)).toEqual({ ...question, contextUrl: '', detailsUrl: '', imageUrls: [], videoUrl: '' });
    const h = computeAskHashes(ask, TEST_ADDRESS, resolver);
    expect(h.questions[0]!.submissionKey).toBe(submissionKey(onChainQuestion(question)));
    expect(h.questions[0]!.submissionKey).not.toBe(submissionKey(question));
    expect((h.canonicalPayload.questions as any)[0].detailsUrl).toBe(hosted);
  });
});

describe('seed-shaped files: translated, dropped or refused (item 3.6)', () => {
  const seed = (bounty: Record<string, unknown> = {}, roundConfig?: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const body = structuredClone(exampleBody) as any;
    Object.assign(body.bounty, bounty);
    if (roundConfig) body.roundConfig = roundConfig;
    return { ...body, ...extra };
  };
  const live = (body: unknown) => {
    const t = translateAsk(body, NOW);
    return { ...t, ask: normalizeAsk(t.body) };
  };

  it('one-epoch rounds become questionDurationSeconds; windows equal to it, one settled round and a start-by far enough ahead are dropped', () => {
    const body = seed(
      { requiredSettledRounds: '1', bountyStartBy: String(NOW + 3600), bountyWindowSeconds: '600', feedbackWindowSeconds: '600' },
      { epochDuration: '600', maxDuration: '600', minVoters: '3', maxVoters: '50' },
    );
    const t = live(body);
    expect(t.body.roundConfig).toEqual({ minVoters: '3', maxVoters: '50', questionDurationSeconds: '600' });
    expect(t.body.bounty).toEqual({ amount: '1500000', bountyEligibility: '0', requiredVoters: '3' });
    expect(t.translations.map((x) => `${x.action} ${x.field}`)).toEqual([
      'translated roundConfig.epochDuration/maxDuration',
      'dropped bounty.requiredSettledRounds',
      'dropped bounty.bountyStartBy',
      'dropped bounty.bountyWindowSeconds',
      'dropped bounty.feedbackWindowSeconds',
    ]);
    // The same ask as its live twin: the very same hashes, so the operationKey and the x402 nonce are verifiable.
    const twin = structuredClone(exampleBody) as any;
    twin.roundConfig = { questionDurationSeconds: '600', minVoters: '3', maxVoters: '50' };
    expect(computeAskHashes(t.ask, TEST_ADDRESS, resolver).operationKey).toBe(
      computeAskHashes(normalizeAsk(twin), TEST_ADDRESS, resolver).operationKey,
    );
    expect(body.bounty.requiredSettledRounds).toBe('1'); // the user's body is not changed
  });

  it.each([
    ['epoch ≠ max', seed({}, { epochDuration: '600', maxDuration: '1800' }), /roundConfig\.maxDuration: the service runs one-epoch rounds/],
    [
      'two settled rounds',
      seed({ requiredSettledRounds: '2' }),
      /bounty\.requiredSettledRounds: the service pays the bounty on one creation-anchored round/,
    ],
    ['a past start-by', seed({ bountyStartBy: String(NOW - 1) }), /bounty\.bountyStartBy: \d+ is already past/],
    ['a start-by too close', seed({ bountyStartBy: String(NOW + 60) }), /bounty\.bountyStartBy: \d+ is less than 30 minutes away/],
    [
      'a window ≠ the duration',
      seed({ bountyWindowSeconds: '3600' }),
      /bounty\.bountyWindowSeconds: the service's bounty window is the question duration \(1200 s\), not 3600 s; set roundConfig\.questionDurationSeconds to 3600/,
    ],
    [
      'a bonus close time',
      seed({}, undefined, {
        maxPaymentAmount: '2500000',
        feedbackBonus: { amount: '1000000', asset: 'USDC', feedbackClosesAt: String(NOW + 5000) },
      }),
      /feedbackBonus\.feedbackClosesAt: the service closes the feedback bonus with the question/,
    ],
    ['a non-number', seed({ bountyWindowSeconds: 'soon' }), /bounty\.bountyWindowSeconds: must be a whole number of seconds/],
  ])('refuses %s locally, naming the field and what the service offers', (_n, body, message) => {
    expect(() => translateAsk(body, NOW)).toThrow(message);
  });

  it('a preset duration is what the windows are compared with', () => {
    const body = seed({ bountyWindowSeconds: '60' }, undefined, { roundConfig: undefined, roundPreset: 'pure_agent_fast' });
    expect(live(body).ask.roundConfig.questionDurationSeconds).toBe(60);
  });

  it("the parser (and so the sandbox) refuses a seed field with the service's own answer", () => {
    const err = (() => {
      try {
        normalizeAsk(seed({ bountyStartBy: '0' }));
      } catch (e) {
        return e as AskFieldError;
      }
    })();
    expect(err?.field).toBe('bounty.bountyStartBy');
    expect(err?.service).toEqual({
      stage: 'parse',
      code: 'invalid_arguments',
      originalCode: 'X402QuestionInputError',
      message: 'bounty.bountyStartBy is no longer accepted; bounty timing starts when the question is created.',
    });
  });
});
