// Field-for-field shapes of every route and tool the sandbox serves, against shared/spec/service-api.md §5, §8.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, decodeFunctionData, http, type Hex } from 'viem';
import { contentRegistryAbi } from '../src/protocol/abi.js';
import { privateKeyToAccount } from 'viem/accounts';
import { api, type SandboxHandle } from './helpers/sandbox.js';
import { openSession } from './helpers/chain.js';
import { readVector, TEST_ADDRESS, TEST_PRIVATE_KEY } from './helpers/cli.js';

const keys = (o: Record<string, unknown>) => Object.keys(o).sort();
const same = (o: Record<string, unknown>, expected: string[]) => expect(keys(o)).toEqual([...expected].sort());
const account = privateKeyToAccount(TEST_PRIVATE_KEY as Hex);

let sb: SandboxHandle;
let base: string;
let n = 0;
const body = (extra: Record<string, unknown> = {}) => ({
  chainId: 31337,
  clientRequestId: `shape-${Date.now()}-${n++}`,
  walletAddress: TEST_ADDRESS,
  maxPaymentAmount: '2500000',
  bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
  feedbackBonus: { amount: '1000000', asset: 'USDC' },
  question: { title: 'Shape test', contextUrl: 'https://example.com/shape', categoryId: '1', tags: ['shape'] },
  ...extra,
});

const CONFIRM_KEYS = [
  'bounty',
  'bundleId',
  'chainId',
  'clientRequestId',
  'contentId',
  'contentIds',
  'error',
  'feedbackBonus',
  'operationKey',
  'payerAddress',
  'payloadHash',
  'payment',
  'questionCount',
  'rewardPoolId',
  'status',
  'transactionHashes',
  'updatedAt',
  'publicUrl',
  'warnings',
  'nextAction',
  'pollAfterMs',
  'ready',
  'resultTool',
  'terminal',
];
const RESULT_KEYS = [
  'operation',
  'answer',
  'answerScopes',
  'cohortSummary',
  'targetAudienceMatch',
  'confidence',
  'blockedReason',
  'distribution',
  'dissentingView',
  'estimatedReadyAt',
  'featureTest',
  'finalityStatus',
  'feedbackQuality',
  'includesVetoWindow',
  'liveAskGuidance',
  'limitations',
  'majorObjections',
  'methodology',
  'normalMaxDelaySeconds',
  'protocolState',
  'publicUrl',
  'rationaleSummary',
  'ready',
  'recommendedNextAction',
  'sourceUrls',
  'stakeMass',
  'stalled',
  'voteCount',
  'wait',
];

beforeAll(async () => {
  ({ sb } = await openSession());
  base = sb.info.baseUrl;
  await sb.control('/__sandbox/fund', { address: TEST_ADDRESS, usdc: '100000000' });
});
afterAll(async () => {
  await sb.stop();
});

describe('route shapes', () => {
  it('GET /api/agent/templates: 13 templates in the spec order with the spec fields', async () => {
    const r = await api(base, 'GET', '/api/agent/templates');
    expect(r.body.templates.map((t: { id: string }) => t.id)).toEqual([
      'generic_rating',
      'go_no_go',
      'ranked_option_member',
      'llm_answer_quality',
      'rag_grounding_check',
      'claim_verification',
      'source_credibility_check',
      'agent_action_go_no_go',
      'feature_acceptance_test',
      'agent_trace_review',
      'proposal_review',
      'pairwise_output_preference',
      'head_to_head_ab',
    ]);
    for (const t of r.body.templates) {
      same(t, [
        'id',
        'version',
        'title',
        'description',
        'ratingSystem',
        'voteSemantics',
        'interpretation',
        'recommendedUse',
        'resultSpecHash',
        'submissionPattern',
        'bundleStrategy',
        'templateInputsSchema',
        'templateInputsExample',
      ]);
      same(t.interpretation, ['proceedRatingBps', 'proceedConservativeRatingBps', 'cautionRatingBps', 'reviseRatingBps']);
    }
    expect(r.body.templates[0].resultSpecHash).toBe('0x705d8b88b666061ca73cff8abf47248485e1eb4e06fa5ac7470d1ba6914f6970');
  });

  it('POST /api/agent/quote', async () => {
    const r = await api(base, 'POST', '/api/agent/quote', body());
    same(r.body, [
      'canSubmit',
      'chainId',
      'clientRequestId',
      'fastLane',
      'feedbackBonus',
      'feedbackBonusGuidance',
      'legalNotice',
      'maxPaymentAmountHint',
      'operationKey',
      'payloadHash',
      'payment',
      'paymentMode',
      'questionCount',
      'resolvedCategoryIds',
      'walletPolicyRequired',
      'wallet',
    ]);
    same(r.body.payment, [
      'amount',
      'asset',
      'bountyAmount',
      'decimals',
      'feedbackBonusAmount',
      'feedbackBonusAsset',
      'spender',
      'tokenAddress',
      'totalAmount',
    ]);
    same(r.body.feedbackBonus, ['amount', 'asset', 'awarder', 'enabled', 'feedbackClosesAt', 'nextTool', 'status']);
    same(r.body.fastLane, [
      'conservativeStartingBountyAtomic',
      'estimatedTimeToResultSeconds',
      'estimatedResultAt',
      'expectedResponse',
      'guidance',
      'minimumViableQuorum',
      'perRequiredSignalUnitAtomic',
      'pricingConfidence',
      'recommendedAction',
      'requiredSignalUnits',
      'speed',
      'stretchBountyAmountAtomic',
      'suggestedBountyAmountAtomic',
      'warnings',
    ]);
    expect(r.body.maxPaymentAmountHint).toBe('2500000');
    expect(r.body.payloadHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('POST /api/agent/asks (wallet_calls, x402, dry run), confirm, bonus confirm, status, result', async () => {
    const w = await api(base, 'POST', '/api/agent/asks', body({ paymentMode: 'wallet_calls' }));
    same(w.body, [
      'bounty',
      'chainId',
      'clientRequestId',
      'operationKey',
      'payloadHash',
      'payment',
      'questionCount',
      'questionMetadataBaseUrl',
      'ready',
      'roundConfig',
      'status',
      'terminal',
      'transactionPlan',
      'paymentMode',
      'wallet',
      'confirmTool',
      'statusTool',
      'fastLane',
      'feedbackBonus',
      'feedbackBonusGuidance',
      'legalNotice',
      'managedBudget',
      'pollAfterMs',
      'publicUrl',
      'walletPolicyRequired',
      'webhook',
      'warnings',
    ]);
    same(w.body.bounty, ['amount', 'asset', 'requiredVoters', 'bountyEligibility']);
    same(w.body.payment, [
      'amount',
      'asset',
      'bountyAmount',
      'decimals',
      'spender',
      'tokenAddress',
      'feedbackBonusAmount',
      'feedbackBonusAsset',
      'totalAmount',
    ]);
    for (const call of w.body.transactionPlan.calls) same(call, ['id', 'phase', 'functionName', 'description', 'to', 'data', 'value']);
    expect(w.body.transactionPlan.calls.map((c: { id: string }) => c.id)).toEqual([
      'reserve-submission',
      'approve-usdc',
      'submit-question',
    ]);

    const x = await api(base, 'POST', '/api/agent/asks', body({ paymentMode: 'x402_authorization' }));
    expect(x.body).toMatchObject({
      paymentMode: 'x402_authorization',
      paymentScheme: 'eip3009_usdc_authorization',
      nextAction: 'sign_x402_authorization',
      transactionPlan: null,
    });
    same(x.body.x402AuthorizationRequest, ['authorization', 'scheme', 'questionMetadataBaseUrl', 'eip712', 'submitTool']);
    same(x.body.x402AuthorizationRequest.eip712, ['domain', 'message', 'primaryType', 'types']);
    same(x.body.x402AuthorizationRequest.eip712.domain, ['chainId', 'name', 'verifyingContract', 'version']);
    same(x.body.x402AuthorizationRequest.authorization, ['from', 'to', 'value', 'validAfter', 'validBefore', 'nonce']);
    expect(x.body.payment.amount).toBe('2500000');
    expect(x.body.payment.spender).toBe(sb.info.contracts.x402QuestionSubmitter);

    const d = await api(base, 'POST', '/api/agent/asks', body({ dryRun: true }));
    expect(d.body).toMatchObject({
      status: 'dry_run',
      executionMode: 'dry_run',
      paymentRequired: false,
      sandbox: true,
      transactionPlan: null,
      x402AuthorizationRequest: null,
      confirmTool: null,
      ready: true,
      terminal: true,
      warnings: ['dry_run_no_payment', 'dry_run_no_onchain_submission'],
    });
    expect(d.body.result.answer).toBe('dry_run_complete');

    // Execute the wallet plan and look at the confirm/status/result/bonus shapes.
    const pub = createPublicClient({ transport: http(sb.info.rpcUrl), pollingInterval: 50 });
    const wallet = createWalletClient({ account, transport: http(sb.info.rpcUrl) });
    const run = async (calls: { to: Hex; data: Hex; phase: string }[]) => {
      const out: Hex[] = [];
      for (const c of calls) {
        if (c.phase === 'submit_question') await new Promise((r) => setTimeout(r, 1250));
        const h = await wallet.sendTransaction({ account, chain: null, to: c.to, data: c.data });
        await pub.waitForTransactionReceipt({ hash: h });
        out.push(h);
      }
      return out;
    };
    const c = await api(base, 'POST', `/api/agent/asks/${w.body.operationKey}/confirm`, {
      transactionHashes: await run(w.body.transactionPlan.calls),
    });
    same(c.body, CONFIRM_KEYS);
    same(c.body.feedbackBonus, [
      'amount',
      'asset',
      'awarder',
      'contentId',
      'enabled',
      'error',
      'feedbackClosesAt',
      'poolId',
      'roundId',
      'status',
      'transactionHashes',
      'payment',
      'transactionPlan',
      'confirmTool',
    ]);
    const fb = await api(base, 'POST', `/api/agent/asks/${w.body.operationKey}/confirm-feedback-bonus`, {
      transactionHashes: await run(c.body.feedbackBonus.transactionPlan.calls),
    });
    same(fb.body, ['feedbackBonus', 'operationKey', 'status', 'warnings']);
    same(fb.body.feedbackBonus, [
      'amount',
      'asset',
      'awarder',
      'contentId',
      'enabled',
      'error',
      'feedbackClosesAt',
      'poolId',
      'roundId',
      'status',
      'transactionHashes',
    ]);
    const s = await api(base, 'GET', `/api/agent/asks/${w.body.operationKey}`);
    same(s.body, [...CONFIRM_KEYS, 'callbackDeliveries', 'liveAskGuidance']);
    const res = await api(base, 'GET', `/api/agent/results/${w.body.operationKey}`);
    same(res.body, RESULT_KEYS);
    same(res.body.distribution, [
      'conservativeRatingBps',
      'down',
      'evidence',
      'rating',
      'ratingBps',
      'revealedCount',
      'state',
      'stateLabel',
      'up',
    ]);
    same(res.body.stakeMass, ['down', 'total', 'unit', 'up']);
    const byContent = await api(base, 'GET', `/api/agent/results/by-content/${c.body.contentId}`);
    same(byContent.body, RESULT_KEYS);
    const wrongContent = await api(base, 'GET', `/api/agent/results/${w.body.operationKey}?contentId=999`);
    expect(wrongContent.status).toBe(404);
    expect(wrongContent.body.message).toBe('contentId does not belong to this ask.');
    const lookup = await api(base, 'GET', '/api/agent/asks/by-client-request?chainId=31337');
    expect(lookup.status).toBe(400);
    expect(lookup.body.message).toBe('Provide operationKey or chainId, clientRequestId, and walletAddress.');
  });
});

describe('the sandbox answers as the live corpus shows (test/fixtures/vectors/live)', () => {
  const corpus = readVector('live/asks.json');
  const templates = readVector('live/templates.json');
  type Case = (typeof corpus.cases)[number];
  let m = 0;
  const retarget = (b: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    ...structuredClone(b),
    chainId: 31337,
    walletAddress: TEST_ADDRESS,
    clientRequestId: `corpus-${Date.now()}-${m++}`,
    ...extra,
  });
  const plain = (v: unknown) => JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x)));
  const hasImages = (c: Case) => [c.request.body.question, ...(c.request.body.questions ?? [])].some((q: any) => q?.imageUrls?.length);
  beforeAll(async () => {
    await sb.control('/__sandbox/settings', { rateLimits: { write: 10_000, read: 10_000 } });
  });

  it('GET /api/agent/templates: the live templates (order, titles, vote semantics, thresholds, required inputs, result-spec hashes)', async () => {
    const r = await api(base, 'GET', '/api/agent/templates');
    expect(r.body.templates.map((t: { id: string }) => t.id)).toEqual(templates.body.templates.map((t: { id: string }) => t.id));
    r.body.templates.forEach((t: any, i: number) => {
      const live = templates.body.templates[i];
      expect(keys(t)).toEqual(keys(live));
      for (const k of [
        'title',
        'version',
        'voteSemantics',
        'interpretation',
        'submissionPattern',
        'bundleStrategy',
        'ratingSystem',
        'resultSpecHash',
      ])
        expect(t[k], `${t.id}.${k}`).toEqual(live[k]);
      expect(t.templateInputsSchema.required ?? []).toEqual(live.templateInputsSchema.required ?? []);
    });
  });

  // Upload provenance (images and details the sandbox never stored) depends on the service's state: not compared.
  const refusals = corpus.cases.filter(
    (c: Case) =>
      !c.verdict.accepted &&
      c.verdict.stage !== 'internal_error' &&
      !/must come from RateLoop|belong to the submitting wallet/.test(c.verdict.message),
  );
  it.each(refusals.map((c: Case) => [c.id, c]))("%s: refused with the service's exact envelope", async (_id, c: Case) => {
    const r = await api(base, 'POST', '/api/agent/asks', retarget(c.request.body));
    expect(r.status).toBe(c.ask.httpStatus);
    expect(r.body).toEqual(c.ask.body);
  });

  it('a wallet-calls bundle under bundle_internal_error: the live HTTP 500 envelope', async () => {
    const c = corpus.cases.find((x: Case) => x.id === 'bundle-two-questions');
    await sb.control('/__sandbox/hostile', { scenario: 'bundle_internal_error', count: 1 });
    const r = await api(base, 'POST', '/api/agent/asks', retarget(c.request.body));
    expect(r.status).toBe(500);
    expect(r.body).toEqual(c.ask.body);
  });

  const accepted = corpus.cases.filter((c: Case) => c.verdict.accepted && !hasImages(c));
  it.each(accepted.map((c: Case) => [c.id, c]))(
    '%s: the same question on chain (URL rules, round settings, gated blanking), round config and bounty as the service',
    async (_id, c: Case) => {
      const body = retarget(c.request.body, { paymentMode: 'wallet_calls' }) as any;
      const gated = body.question?.confidentiality?.visibility === 'gated';
      if (gated) {
        // Hosted by the sandbox with the same text, so the same details hash.
        const hosted = await sb.control('/__sandbox/content', { gated: true, details: c.setup.details[0].text });
        body.question.detailsUrl = hosted.details.url;
        expect(hosted.details.sha256).toBe(c.setup.details[0].detailsHash);
      }
      const r = await api(base, 'POST', '/api/agent/asks', body);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.roundConfig).toEqual(c.ask.body.roundConfig);
      expect(r.body.bounty).toEqual(c.ask.body.bounty);
      const submit = r.body.transactionPlan.calls.at(-1);
      const { args } = decodeFunctionData({ abi: contentRegistryAbi, data: submit.data }) as { args: unknown[] };
      const live = (c.plan?.decoded.at(-1) ?? c.x402.signedFollowUp.plan.decoded[0]).args;
      const mine = plain(args);
      // Everything but the salt (it binds the operation, whose id differs here) is what the service put on chain.
      expect([...mine.slice(0, 7), ...mine.slice(8, 12)]).toEqual([...live.slice(0, 7), ...live.slice(8, 12)]);
      if (c.ask.body.paymentMode === 'wallet_calls') {
        expect(keys(r.body)).toEqual(keys(c.ask.body));
        expect(keys(r.body.payment)).toEqual(keys(c.ask.body.payment));
      }
    },
  );

  it('an x402 ask: the authorization request and the signed follow-up have the live keys', async () => {
    const c = corpus.cases.find((x: Case) => x.id === 'baseline-x402');
    const body = retarget(c.request.body);
    const first = await api(base, 'POST', '/api/agent/asks', body);
    expect(keys(first.body)).toEqual(keys(c.ask.body));
    expect(keys(first.body.x402AuthorizationRequest)).toEqual(keys(c.ask.body.x402AuthorizationRequest));
    const typed = first.body.x402AuthorizationRequest.eip712;
    const signature = await account.signTypedData({
      ...typed,
      message: {
        ...typed.message,
        value: BigInt(typed.message.value),
        validAfter: BigInt(typed.message.validAfter),
        validBefore: BigInt(typed.message.validBefore),
      },
    });
    const follow = await api(base, 'POST', '/api/agent/asks', { ...body, paymentAuthorization: { ...typed.message, signature } });
    expect(follow.status, JSON.stringify(follow.body)).toBe(200);
    expect(keys(follow.body)).toEqual(keys(c.x402.signedFollowUp.body));
    expect(
      follow.body.transactionPlan.calls.map((x: { id: string; phase: string; functionName: string }) => [x.id, x.phase, x.functionName]),
    ).toEqual(
      c.x402.signedFollowUp.body.transactionPlan.calls.map((x: { id: string; phase: string; functionName: string }) => [
        x.id,
        x.phase,
        x.functionName,
      ]),
    );
  });
});
