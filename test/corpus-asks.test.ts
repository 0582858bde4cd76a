// The live corpus replayed (issue 12 §2; test/fixtures/vectors/live/README.md): every ask the real service's code was
// run on. loopsign must derive exactly what the service derived (canonical payload, payloadHash, operationKey,
// wallet-bound id, submission keys, salts, reveal commitments, x402 nonces), pass every real plan with the guards the
// signing path runs (in-process, and the function `check-plan` runs on every accepted answer), refuse locally what the real parser refuses
// (naming the same field), translate seed-shaped fields into what the service accepts, leave state-dependent
// refusals to the service, recompute every template's result-spec hash and accept the real rating plans. The built
// `check-plan` on the corpus (exit codes, documents, refusals): test/corpus-asks.cli.test.ts.
import { afterAll, describe, expect, it } from 'vitest';
import { decodeFunctionData, encodeFunctionData, keccak256, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { askGuardContext, checkPlan, publicMetadataBase, templateResolverFrom } from '../src/ask/check-plan.js';
import { checkAskBody } from '../src/ask/ask-body.js';
import { assertPaidRoundDeployment, chainForProfile } from '../src/chains/index.js';
import type { ChainConfig } from '../src/chains/table.js';
import { UsageError, RefusedError } from '../src/errors.js';
import { contentRegistryAbi } from '../src/protocol/abi.js';
import { bundleRevealCommitment, onChainQuestion, questionMetadata, revealCommitment, tagsString } from '../src/protocol/ask-hashes.js';
import { contentHash } from '../src/protocol/submission.js';
import { TEMPLATES, resultSpecHash } from '../src/protocol/templates.js';
import { checkAskEnvelope, checkWalletPlan, checkX402Plan, checkX402Request } from '../src/wallet/plan-guard.js';
import { checkRatingPlan } from '../src/wallet/rating-guard.js';
import { capture } from './helpers/capture.js';
import { readVector, TEST_PRIVATE_KEY } from './helpers/cli.js';
import { acceptedAnswers, ciphertext, commitOf, corpus, corpusChain, NOW, rating, serviceField, type Case } from './helpers/corpus-asks.js';

const templatesDoc = readVector('live/templates.json');
const resolver = templateResolverFrom(templatesDoc.body.templates);
const account = privateKeyToAccount(TEST_PRIVATE_KEY as Hex);

const chain = corpusChain();

/** Refusals at the service's request stage that depend only on the input: loopsign gives them itself. */
const LOCAL_REQUEST_RULES: Record<string, string> = {
  'bundle-x402-rejected': 'paymentMode',
  'lrep-bounty-x402-rejected': 'paymentMode',
  'max-payment-too-low': 'maxPaymentAmount',
  'seed-feedback-closes-at': 'feedbackBonus.feedbackClosesAt',
};
const OBSOLETE = [
  'bounty.requiredSettledRounds',
  'bounty.bountyStartBy',
  'bounty.bountyWindowSeconds',
  'bounty.feedbackWindowSeconds',
  'roundConfig.epochDuration',
  'roundConfig.maxDuration',
];
const hasObsolete = (body: any) =>
  OBSOLETE.some((p) => {
    const [a, b] = p.split('.') as [string, string];
    return body[a]?.[b] !== undefined;
  });

const tally = new Map<string, number>();
const count = (k: string) => tally.set(k, (tally.get(k) ?? 0) + 1);

function localRefusal(body: unknown): UsageError | undefined {
  try {
    checkAskBody(body, 'ask', NOW);
    return undefined;
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
}

function hashesOf(c: Case, body = c.request.body) {
  const { ask } = checkAskBody(body, 'ask', NOW);
  const g = askGuardContext(
    chain,
    c.walletAddress,
    ask,
    resolver,
    publicMetadataBase(c.ask.body?.questionMetadataBaseUrl) ?? 'https://ponder.rateloop.ai',
  );
  return { ask, g };
}

function expectDerived(c: Case, g: ReturnType<typeof hashesOf>['g']) {
  const d = c.derived;
  expect(g.hashes.effectiveClientRequestId).toBe(d.effectiveClientRequestId);
  expect(g.hashes.canonicalPayload).toEqual(d.canonicalPayload);
  expect(g.hashes.canonicalJson).toBe(d.canonicalJson);
  expect(g.hashes.payloadHash).toBe(d.payloadHash);
  expect(g.hashes.operationKey).toBe(d.operationKey);
}

afterAll(() => {
  const n = (k: string) => tally.get(k) ?? 0;
  const line =
    `corpus asks: ${corpus.cases.length} cases: ${n('accepted')} accepted with equal hashes and every guard passing (${n('x402')} x402 with the signed follow-up), ` +
    `${n('translated')} seed-shaped translated to a live body the service accepts, ${n('parse')} refused locally naming the parser's field, ` +
    `${n('request-local')} refused locally by an input-only service rule, ${n('service-state')} left to the service (state-dependent), ` +
    `${n('bundle-500')} bundles the service answers with HTTP 500; check-plan in-process: ${n('check-plan-ok')} plans passed; ` +
    `templates: ${n('template')} result-spec hashes recomputed; rating plans: ${n('rating-ok')} accepted, ${n('rating-refused')} refused`;
  console.log(line);
  capture.summary(line);
});

describe('every ask input of the corpus', () => {
  it('the profile pins exactly the contract addresses the service used on 8453', () => {
    const profileChain = chainForProfile(8453);
    for (const [name, addr] of Object.entries(chain.contracts))
      expect(String(profileChain.contracts[name as keyof ChainConfig['contracts']]).toLowerCase(), name).toBe(String(addr).toLowerCase());
    expect(profileChain.tokens.LREP.address?.toLowerCase()).toBe(corpus.meta.contracts.lrep.toLowerCase());
    expect(profileChain.tokens.USDC.address?.toLowerCase()).toBe(corpus.meta.contracts.usdc.toLowerCase());
  });

  it.each(corpus.cases.filter((c: Case) => c.verdict.accepted).map((c: Case) => [c.id, c]))(
    "%s: accepted, hashes equal the service's, the real plan passes every guard",
    async (_id, c: Case) => {
      const { ask, g } = hashesOf(c);
      expectDerived(c, g);
      const ex = c.extracted;
      expect(g.hashes.questions.map((q) => q.submissionKey)).toEqual(ex.submissionKeys);
      expect(g.hashes.salts).toEqual(ex.salts);
      // x402 asks reserve nothing (the submitter checks the nonce instead): the corpus records no commitment for them.
      if (ex.revealCommitment !== null) {
        const commitment = ask.isBundle
          ? bundleRevealCommitment(ask, g.hashes, c.walletAddress)
          : revealCommitment(ask, g.hashes, c.walletAddress);
        expect(commitment).toBe(ex.revealCommitment);
      }
      // The content hashes the service will check at confirmation are those of the questions as they go on chain.
      ask.questions.forEach((question, i) => {
        const q = onChainQuestion(question);
        const spec = {
          questionMetadataHash: g.hashes.questions[i]!.questionMetadataHash,
          resultSpecHash: g.hashes.questions[i]!.resultSpecHash,
        };
        expect(contentHash({ ...q, tags: tagsString(q), details: { detailsUrl: q.detailsUrl, detailsHash: q.detailsHash }, spec })).toBe(
          c.serverRecord.paymentReceipt.expectedContentHashes[i],
        );
      });
      // The question metadata documents the service stored (and their hashes) are the ones loopsign builds.
      c.serverRecord.paymentReceipt.questionMetadata.forEach((m: any, i: number) => {
        expect(questionMetadata(ask, ask.questions[i]!, i)).toEqual(m.questionMetadata);
        expect(g.hashes.questions[i]!.questionMetadataHash).toBe(m.questionMetadataHash);
        expect(g.hashes.questions[i]!.questionMetadataUri).toBe(m.questionMetadataUri);
      });

      expect(checkAskEnvelope(g, c.ask.body)).toBe(c.derived.operationKey);
      if (c.ask.body.paymentMode === 'wallet_calls') {
        expect(c.ask.body.transactionPlan.calls).toEqual(c.plan.calls);
        expect(checkWalletPlan(g, c.ask.body)).toHaveLength(3);
      } else {
        const typed = checkX402Request(g, c.ask.body, NOW);
        expect(typed.message.nonce).toBe(ex.x402Nonce);
        const signature = await account.signTypedData(typed as never);
        expect(signature).toBe(c.x402.signature);
        const follow = c.x402.signedFollowUp;
        expect(checkAskEnvelope(g, follow.body)).toBe(c.derived.operationKey);
        expect(checkX402Plan(g, follow.body, typed.message, signature)).toHaveLength(1);
        count('x402');
      }
      count('accepted');
    },
  );

  it.each(corpus.cases.filter((c: Case) => c.verdict.stage === 'parse').map((c: Case) => [c.id, c]))(
    "%s: the parser's refusal is given locally (or the seed field translated)",
    (_id, c: Case) => {
      if (hasObsolete(c.request.body)) {
        // Translated: the body loopsign sends is a live body the service accepts — the same ask as baseline-default-mode.
        const loaded = checkAskBody(c.request.body, 'ask', NOW);
        expect(loaded.translations.length).toBeGreaterThan(0);
        expect(hasObsolete(loaded.body)).toBe(false);
        const live = corpus.cases.find((o: Case) => o.id === 'baseline-default-mode');
        const { g } = hashesOf(live, { ...loaded.body, clientRequestId: live.request.body.clientRequestId });
        expectDerived(live, g);
        count('translated');
        return;
      }
      const refusal = localRefusal(c.request.body);
      expect(refusal, 'refused locally').toBeDefined();
      expect(refusal!.exitCode).toBe(2);
      expect(refusal!.details?.field).toBe(serviceField(c));
      count('parse');
    },
  );

  it.each(corpus.cases.filter((c: Case) => c.verdict.stage === 'request').map((c: Case) => [c.id, c]))(
    '%s: input-only rules refused locally, state-dependent ones left to the service',
    (id, c: Case) => {
      const refusal = localRefusal(c.request.body);
      if (LOCAL_REQUEST_RULES[id]) {
        expect(refusal?.exitCode).toBe(2);
        expect(refusal!.details?.field).toBe(LOCAL_REQUEST_RULES[id]);
        count('request-local');
      } else {
        // Upload provenance (another wallet's image, a placeholder upload, an unhosted detailsUrl) is the service's to judge.
        expect(refusal, refusal?.message).toBeUndefined();
        expectDerived(c, hashesOf(c).g);
        count('service-state');
      }
    },
  );

  it.each(corpus.cases.filter((c: Case) => c.verdict.stage === 'internal_error').map((c: Case) => [c.id, c]))(
    "%s: a wallet-calls bundle, accepted locally with the service's hashes (the service answers 500)",
    (_id, c: Case) => {
      const { ask, g } = hashesOf(c);
      expect(ask.isBundle).toBe(true);
      expect(c.ask.httpStatus).toBe(500);
      expectDerived(c, g);
      count('bundle-500');
    },
  );

  it('every case is one of the above', () => {
    const stages = new Set(corpus.cases.map((c: Case) => (c.verdict.accepted ? 'accepted' : c.verdict.stage)));
    expect([...stages].sort()).toEqual(['accepted', 'internal_error', 'parse', 'request']);
  });
});

describe('gated questions: blanked on chain, nothing else may change', () => {
  const gated = corpus.cases.filter((c: Case) => c.verdict.accepted && c.request.body.question?.confidentiality?.visibility === 'gated');

  it('the corpus has gated cases with hosted details, an image and a USDC bond', () =>
    expect(gated.map((c: Case) => c.id)).toEqual([
      'gated-no-bond',
      'gated-explicit-zero-lrep-bond',
      'gated-usdc-bond-after-settlement',
      'gated-with-image',
    ]));

  it.each(gated.map((c: Case) => [c.id, c]))(
    '%s: a plan carrying the URLs on chain is refused; so is a changed detailsHash',
    (_id, c: Case) => {
      const { ask, g } = hashesOf(c);
      const q = ask.questions[0]!;
      const submit = c.ask.body.transactionPlan.calls[2];
      const { args } = decodeFunctionData({ abi: contentRegistryAbi, data: submit.data }) as { args: any[] };
      expect(args[6].detailsUrl).toBe('');
      const tamper = (change: (a: any[]) => void) => {
        const a = structuredClone(args);
        change(a);
        const body = structuredClone(c.ask.body);
        body.transactionPlan.calls[2].data = encodeFunctionData({
          abi: contentRegistryAbi,
          functionName: 'submitQuestionWithRewardAndRoundConfig',
          args: a as never,
        });
        return () => checkWalletPlan(g, body);
      };
      expect(tamper((a) => (a[6] = { ...a[6], detailsUrl: q.detailsUrl }))).toThrow(
        /details\.detailsUrl .*gated question carries it empty/,
      );
      if (q.imageUrls.length) expect(tamper((a) => (a[1] = q.imageUrls))).toThrow(/imageUrls/);
      expect(tamper((a) => (a[6] = { ...a[6], detailsHash: keccak256('0x01') }))).toThrow(/details\.detailsHash/);
      expect(tamper((a) => (a[11] = { ...a[11], bondAmount: 5n }))).toThrow(/confidentiality/);
    },
  );
});

// What `check-plan` runs (src/ask/check-plan.ts checkPlan, on the chain `--chain-id 8453` resolves to), in-process for
// every accepted answer: the built binary was once spawned for each of them only to reach this same result. Its own
// contract (argv, exit 0 / 5 / 2, the document) is proven on a representative set in test/corpus-asks.cli.test.ts.
describe('check-plan on the corpus (in-process)', () => {
  it('passes every accepted ask plan, x402 request and signed x402 follow-up', async () => {
    const profileChain = chainForProfile(8453);
    assertPaidRoundDeployment(profileChain);
    for (const [name, ask, response, kind] of acceptedAnswers()) {
      const result = await checkPlan({ ask, response, chain: profileChain, now: NOW });
      expect(
        result.checks.filter((k) => !k.ok),
        name,
      ).toEqual([]);
      expect(result, name).toMatchObject({ passed: true, kind });
      count('check-plan-ok');
    }
  });
});

describe('templates', () => {
  it.each(templatesDoc.body.templates.map((t: any) => [t.id, t]))(
    '%s: the result-spec hash is recomputed, and the sandbox offers the same template',
    (_id, t: any) => {
      expect(resultSpecHash(t.id, t.version, t.voteSemantics)).toBe(t.resultSpecHash);
      const mine = TEMPLATES.find((x) => x.id === t.id)!;
      expect(mine.voteSemantics).toEqual(t.voteSemantics);
      expect(mine.title).toBe(t.title);
      expect(mine.requiredInputs).toEqual(t.templateInputsSchema.required ?? []);
      expect([mine.submissionPattern, mine.bundleStrategy]).toEqual([t.submissionPattern, t.bundleStrategy]);
      count('template');
    },
  );

  it('a template whose hash does not match its own vote semantics is refused', () => {
    const bad = structuredClone(templatesDoc.body.templates);
    bad[0].voteSemantics.up = 'something else';
    expect(() => templateResolverFrom(bad)).toThrow(RefusedError);
  });
});

describe('rating plans', () => {
  it('the sample ciphertext is the one the service hashed', () => {
    for (const c of rating.cases) expect(keccak256(ciphertext)).toBe(c.ciphertextKeccak);
  });

  it.each(rating.cases.filter((c: any) => c.verdict.accepted).map((c: any) => [c.id, c]))(
    '%s: the real plan passes the rating guard',
    (_id, c: any) => {
      const calls = checkRatingPlan(chain, c.response.body, commitOf(c), BigInt(c.request.arguments.contentId));
      expect(calls).toHaveLength(c.decoded.length);
      count('rating-ok');
    },
  );

  it.each(rating.cases.filter((c: any) => !c.verdict.accepted).map((c: any) => [c.id, c]))(
    '%s: refused by the service; its answer is no plan to sign',
    (_id, c: any) => {
      expect(() => checkRatingPlan(chain, c.response.body, commitOf(c), 7n)).toThrow(/no transaction plan/);
      count('rating-refused');
    },
  );

  it('a plan for the open round does not pass for a commit built on a stale round', () => {
    const stale = rating.cases.find((c: any) => c.id === 'stale-round');
    const open = rating.cases.find((c: any) => c.id === 'staked-no-allowance');
    expect(() => checkRatingPlan(chain, open.response.body, commitOf(stale), 7n)).toThrow(/roundContext/);
    count('rating-refused');
  });
});

describe('84532: no trusted deployment', () => {
  it('is refused before anything is sent, naming what to configure (exit 2)', () => {
    let error: unknown;
    try {
      assertPaidRoundDeployment(chainForProfile(84532));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toMatch(/84532.*no published deployment of its paid-round contracts/);
    expect((error as UsageError).hint).toMatch(/chains\.84532\.contracts\.\{contentRegistry/);
  });
});
