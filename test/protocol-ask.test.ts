// The ask derivations against the shared vectors (shared/vectors/README.md §1–2, §8).
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { normalizeAsk, defaultPaymentMode, sameAssetTotal, AskFieldError } from '../src/protocol/ask-normalize.js';
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
} from '../src/protocol/ask-hashes.js';
import { TEMPLATES, resultSpecHash } from '../src/protocol/templates.js';
import { canonicalJson } from '../src/protocol/canonical.js';
import { readVector, VECTORS, TEST_ADDRESS, VECTOR_ASK_BODY } from './helpers/cli.js';

const vec = readVector('ask-keystore-eip3009.json');
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
    const nonce = x402Nonce(ask, h, BASE, { from: TEST_ADDRESS, to: BASE.x402QuestionSubmitter, value: 1500000n, validAfter: 0n, validBefore: 1800000000n });
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
    expect(ask.shape).toBe('live');
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
    ['1000 USDC with 3 voters', (b) => ((b.bounty.amount = '1000000000'), (b.maxPaymentAmount = '1000000000')), /bounty\.requiredVoters: must be at least 5/],
    ['10000 USDC with 5 voters', (b) => ((b.bounty.amount = '10000000000'), (b.maxPaymentAmount = '10000000000'), (b.bounty.requiredVoters = '5'), (b.roundConfig.minVoters = '5')), /at least 8/],
    ['bonus asset', (b) => (b.feedbackBonus = { amount: '1', asset: 'ETH' }), /feedbackBonus\.asset/],
    ['details hash', (b) => ((b.question.detailsUrl = 'https://example.com/d'), (b.question.detailsHash = '0x12')), /question\.detailsHash/],
    ['gated with contextUrl', (b) => (b.question.confidentiality = { visibility: 'gated' }), /question\.contextUrl: must be omitted/],
    ['chain', (b) => (b.chainId = 1), /chainId/],
    ['image url', (b) => (b.question.imageUrls = ['https://example.com/a.png']), /question\.imageUrls\[0\]/],
    ['image hash fragment', (b) => (b.question.imageUrls = ['https://www.rateloop.ai/api/attachments/images/att_abcdefghijklmnop.webp#sha256=0x12']), /fragment/],
  ];
  it.each(bad)('%s', (_n, mutate, message) => {
    const body = structuredClone(exampleBody) as any;
    mutate(body);
    expect(() => normalizeAsk(body)).toThrow(message);
  });

  it('requires a template input the template names', () => {
    const body = structuredClone(exampleBody) as any;
    body.question.templateId = 'feature_acceptance_test';
    body.question.templateInputs = { acceptanceCriteria: 'a', expectedBehavior: 'b', releaseStage: 'beta' };
    expect(() => normalizeAsk(body, { templates: TEMPLATES })).toThrow(/question\.templateInputs\.testSteps/);
  });

  it('accepts the seed shape and keeps its round tuple', () => {
    const body = structuredClone(exampleBody) as any;
    body.bounty.requiredSettledRounds = '1';
    body.bounty.bountyWindowSeconds = '3600';
    body.roundConfig = { epochDuration: '600', maxDuration: '1800', minVoters: '3', maxVoters: '50' };
    const ask = normalizeAsk(body);
    expect(ask.shape).toBe('seed');
    expect(ask.roundConfig).toMatchObject({ epochDuration: 600, maxDuration: 1800, minVoters: 3, maxVoters: 50 });
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
