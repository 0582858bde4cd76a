// The plan guard (chain.md §3, §8.2, §10): nothing is signed until the plan, authorization or bonus plan the
// service returned has been checked against the user's own file, the configured chain and the pinned contract
// addresses — never against the service's own claims. Each refusal names the call and the rule it broke.
import { decodeFunctionData, encodeFunctionData, hexToSignature, type Hex } from 'viem';
import { RefusedError } from '../errors.js';
import { guardRefusal, type Refuse } from './guard-refusal.js';
import { sameAddress, sameHex } from '../hex.js';
import { objectField, type ServiceDoc } from '../service/doc.js';
import type { ChainConfig } from '../chains/table.js';
import {
  RECEIVE_WITH_AUTHORIZATION,
  contentRegistryAbi,
  erc20Abi,
  feedbackBonusEscrowAbi,
  x402LegacyAbi,
  x402SubmitterAbi,
} from '../protocol/abi.js';
import { ASSET_ENUM, profileOf, sameAssetTotal, type NormalizedAsk, type NormalizedQuestion } from '../protocol/ask-normalize.js';
import {
  bundleRevealCommitment,
  onChainQuestion,
  confidentialityTuple,
  revealCommitment,
  rewardTermsTuple,
  roundConfigTuple,
  tagsString,
  x402Nonce,
  type AskHashes,
  type X402Authorization,
} from '../protocol/ask-hashes.js';

export interface PlanCall {
  id?: string;
  phase: string;
  functionName?: string;
  description?: string;
  to: Hex;
  data: Hex;
  value: string;
  waitAfterMs?: number;
}

export interface GuardContext {
  chain: ChainConfig;
  signer: Hex;
  ask: NormalizedAsk;
  /** Hashes recomputed from the file (a seed-shaped file is translated first, so every ask is verifiable). */
  hashes: AskHashes;
  /** Compare operationKey and payloadHash with the recomputed ones (always true since seed files are translated). */
  verifyPayload: boolean;
}

export const refuse: Refuse = guardRefusal(
  'plan_refused',
  'refused',
  'nothing was signed or sent; the service returned something loopsign will not sign. If you trust your configuration, report it to the service operator',
);

export function trusted(chain: ChainConfig, name: keyof ChainConfig['contracts']): Hex {
  const a = chain.contracts[name];
  if (!a)
    refuse(
      'untrusted_chain_config',
      `no trusted ${name} address is configured for chain ${chain.chainId}; set chains.${chain.chainId}.contracts.${name} in the config file`,
    );
  return a as Hex;
}

export function tokenAddress(chain: ChainConfig, asset: 'USDC' | 'LREP'): Hex {
  const a = chain.tokens[asset].address;
  if (!a) refuse('untrusted_chain_config', `no trusted ${asset} address is configured for chain ${chain.chainId}`);
  return a as Hex;
}

function expectObject(value: unknown, what: string): asserts value is ServiceDoc {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) refuse('malformed_response', `the ${what} is not a JSON object`);
}

function integerOrUndefined(value: string | number): bigint | undefined {
  return (typeof value === 'number' && Number.isSafeInteger(value)) || (typeof value === 'string' && /^(0|[1-9][0-9]{0,77})$/.test(value))
    ? BigInt(value)
    : undefined;
}

/** An amount the service states: an integer (number or decimal string), or a refusal — never a parser's exception. */
function integerOf(value: unknown, what: string): bigint {
  if (typeof value === 'bigint') return value;
  if ((typeof value === 'number' && Number.isSafeInteger(value)) || (typeof value === 'string' && /^(0|[1-9][0-9]{0,77})$/.test(value)))
    return BigInt(value);
  return refuse('malformed_response', `${what} is not an integer amount`);
}

/** Response-level checks shared by every ask response. */
export function checkAskEnvelope(ctx: GuardContext, response: unknown): Hex {
  expectObject(response, 'ask response');
  if (response.chainId !== ctx.chain.chainId)
    refuse('wrong_chain', `the response is for chain ${String(response.chainId)}, not ${ctx.chain.chainId}`);
  const named = objectField(response, 'wallet')?.address;
  if (named !== undefined && !sameAddress(named, ctx.signer))
    refuse('wrong_wallet', `the plan is for wallet ${String(named)}, not ${ctx.signer}`);
  if (typeof response.operationKey !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(response.operationKey))
    refuse('bad_operation_key', 'operationKey is not 0x + 64 hex');
  if (ctx.verifyPayload) {
    if (!sameHex(response.operationKey, ctx.hashes.operationKey))
      refuse(
        'operation_key_mismatch',
        `operationKey ${response.operationKey} is not the one this ask hashes to (${ctx.hashes.operationKey})`,
      );
    if (response.payloadHash !== undefined && !sameHex(response.payloadHash, ctx.hashes.payloadHash))
      refuse('payload_hash_mismatch', 'payloadHash is not the one this ask hashes to');
  }
  const p = objectField(response, 'payment');
  if (p) {
    const total = integerOf(p.totalAmount ?? p.amount ?? 0, 'payment.totalAmount');
    if (ctx.ask.maxPaymentAmount !== null && total > ctx.ask.maxPaymentAmount)
      refuse('spend_cap', `the service asks for ${total}, above maxPaymentAmount ${ctx.ask.maxPaymentAmount}`);
    if (p.tokenAddress !== undefined && !sameAddress(p.tokenAddress, tokenAddress(ctx.chain, ctx.ask.bounty.asset)))
      refuse('wrong_asset', `payment token ${String(p.tokenAddress)} is not the trusted ${ctx.ask.bounty.asset}`);
  }
  return response.operationKey as Hex;
}

export function checkPlanShape(plan: unknown, count: number | [number, number], label: string): PlanCall[] {
  if (!plan || typeof plan !== 'object') refuse('missing_plan', `the ${label} response has no transaction plan`);
  const p = plan as { calls?: unknown; requiresOrderedExecution?: unknown };
  if (!Array.isArray(p.calls) || p.calls.length === 0) refuse('empty_plan', `the ${label} plan has no calls`);
  if (p.requiresOrderedExecution === false)
    refuse('unordered_plan', `the ${label} plan says requiresOrderedExecution: false, which the service never sends`);
  const [lo, hi] = Array.isArray(count) ? count : [count, count];
  if (p.calls.length < lo || p.calls.length > hi)
    refuse('call_count', `the ${label} plan has ${p.calls.length} calls; expected ${lo === hi ? `exactly ${lo}` : `${lo} to ${hi}`}`);
  return p.calls.map((c, i) => {
    const call = c as PlanCall;
    if (
      !call ||
      typeof call !== 'object' ||
      typeof call.to !== 'string' ||
      typeof call.data !== 'string' ||
      !/^0x([0-9a-fA-F]{2})+$/.test(call.data)
    ) {
      refuse('malformed_call', 'call has no valid to/data', { call: i });
    }
    if (!/^0x[0-9a-fA-F]{40}$/.test(call.to)) refuse('malformed_call', `to ${call.to} is not an address`, { call: i });
    if (String(call.value ?? '0') !== '0')
      refuse('native_value', `the call sends native value ${call.value}; plans never move ETH`, { call: i, phase: call.phase });
    if (call.waitAfterMs !== undefined && (typeof call.waitAfterMs !== 'number' || call.waitAfterMs < 0 || call.waitAfterMs > 600_000)) {
      refuse('malformed_call', 'waitAfterMs must be a non-negative number of at most 10 minutes', { call: i });
    }
    return call;
  });
}

export function decode<A extends readonly unknown[]>(abi: A, call: PlanCall, i: number, fn: string) {
  let d: { functionName: string; args: readonly unknown[] };
  try {
    d = decodeFunctionData({ abi: abi as never, data: call.data }) as never;
  } catch {
    refuse('unknown_selector', `calldata does not decode as ${fn}`, { call: i, phase: call.phase });
  }
  if (d.functionName !== fn) refuse('wrong_function', `calldata calls ${d.functionName}, expected ${fn}`, { call: i, phase: call.phase });
  // Re-encoding must give back the exact bytes: no trailing data, no non-canonical encodings.
  if (!sameHex((encodeFunctionData as (p: unknown) => Hex)({ abi, functionName: fn, args: d.args }), call.data)) {
    refuse('non_canonical_calldata', 'calldata carries bytes beyond the canonical encoding', { call: i, phase: call.phase });
  }
  return d.args;
}

export function expectTo(call: PlanCall, i: number, want: Hex, what: string): void {
  if (!sameAddress(call.to, want))
    refuse('untrusted_target', `target ${call.to} is not the trusted ${what} ${want}`, { call: i, phase: call.phase });
}

export function expectApprove(call: PlanCall, i: number, token: Hex, spender: Hex, amount: bigint, what: string): void {
  expectTo(call, i, token, `${what} token`);
  const [s, v] = decode(erc20Abi, call, i, 'approve') as [Hex, bigint];
  if (!sameAddress(s, spender))
    refuse('wrong_spender', `approval to ${s}, not the trusted ${what} spender ${spender}`, {
      call: i,
      phase: call.phase,
      field: 'spender',
    });
  if (v !== amount)
    refuse('approval_amount', `approval of ${v} instead of exactly ${amount}`, { call: i, phase: call.phase, field: 'value' });
}

function field(cond: boolean, i: number, phase: string, path: string, got: unknown, want: unknown): void {
  if (!cond)
    refuse('question_mismatch', `${path} is ${JSON.stringify(String(got))}, the ask file says ${JSON.stringify(String(want))}`, {
      call: i,
      phase,
      field: path,
    });
}

/**
 * Compare the question arguments of a submit call with the user's question as it goes on chain: every field equal to
 * the file's, except that a gated question's URLs must be empty (the service blanks them; chain.md §5.1) — its
 * detailsHash, title, tags and category are still the file's. Salt and spec hashes must be the recomputed ones.
 */
function checkQuestionArgs(
  ctx: GuardContext,
  args: readonly unknown[],
  question: NormalizedQuestion,
  qi: number,
  i: number,
  phase: string,
  prefix = '',
): void {
  const q = onChainQuestion(question, profileOf(ctx.ask));
  const gated = q !== question ? ' (a gated question carries it empty on chain)' : '';
  const [contextUrl, imageUrls, videoUrl, title, tags, categoryId, details, salt] = args as [
    string,
    string[],
    string,
    string,
    string,
    bigint,
    { detailsUrl: string; detailsHash: Hex },
    Hex,
  ];
  field(contextUrl === q.contextUrl, i, phase, `${prefix}contextUrl`, contextUrl, q.contextUrl + gated);
  field(JSON.stringify(imageUrls) === JSON.stringify(q.imageUrls), i, phase, `${prefix}imageUrls`, imageUrls, `${q.imageUrls}${gated}`);
  field(videoUrl === q.videoUrl, i, phase, `${prefix}videoUrl`, videoUrl, q.videoUrl + gated);
  field(title === q.title, i, phase, `${prefix}title`, title, q.title);
  field(tags === tagsString(q), i, phase, `${prefix}tags`, tags, tagsString(q));
  field(categoryId === q.categoryId, i, phase, `${prefix}categoryId`, categoryId, q.categoryId);
  field(details.detailsUrl === q.detailsUrl, i, phase, `${prefix}details.detailsUrl`, details.detailsUrl, q.detailsUrl + gated);
  field(sameHex(details.detailsHash, q.detailsHash), i, phase, `${prefix}details.detailsHash`, details.detailsHash, q.detailsHash);
  field(sameHex(salt, ctx.hashes.salts[qi]), i, phase, `${prefix}salt`, salt, ctx.hashes.salts[qi]);
  const spec = (args.length > 10 ? args[10] : args[8]) as { questionMetadataHash: Hex; resultSpecHash: Hex };
  const h = ctx.hashes.questions[qi]!;
  field(
    sameHex(spec.questionMetadataHash, h.questionMetadataHash),
    i,
    phase,
    `${prefix}spec.questionMetadataHash`,
    spec.questionMetadataHash,
    h.questionMetadataHash,
  );
  field(sameHex(spec.resultSpecHash, h.resultSpecHash), i, phase, `${prefix}spec.resultSpecHash`, spec.resultSpecHash, h.resultSpecHash);
}

function checkTerms(ctx: GuardContext, rewardTerms: unknown, roundConfig: unknown, i: number, phase: string): void {
  const want = rewardTermsTuple(ctx.ask.bounty);
  const got = rewardTerms as typeof want;
  field(
    got.asset === want.asset &&
      got.amount === want.amount &&
      got.requiredVoters === want.requiredVoters &&
      got.bountyEligibility === want.bountyEligibility,
    i,
    phase,
    'rewardTerms',
    JSON.stringify(got, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
    JSON.stringify(want, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
  );
  const r = roundConfigTuple(ctx.ask.roundConfig);
  const gr = roundConfig as typeof r;
  field(
    gr.epochDuration === r.epochDuration &&
      gr.maxDuration === r.maxDuration &&
      gr.minVoters === r.minVoters &&
      gr.maxVoters === r.maxVoters,
    i,
    phase,
    'roundConfig',
    JSON.stringify(gr),
    JSON.stringify(r),
  );
}

/** chain.md §3.4: reserve, approve (exact, to the escrow), submit (every field = the file). */
export function checkWalletPlan(ctx: GuardContext, response: unknown): PlanCall[] {
  expectObject(response, 'ask response');
  const calls = checkPlanShape(response.transactionPlan, 3, 'ask');
  const ask = ctx.ask;
  const registry = trusted(ctx.chain, 'contentRegistry');
  const escrow = trusted(ctx.chain, 'questionRewardPoolEscrow');
  const phases = calls.map((c) => c.phase);
  const approvePhase = ask.bounty.asset === 'USDC' ? 'approve_usdc' : 'approve_lrep';
  if (phases[0] !== 'reserve_submission' || phases[1] !== approvePhase || phases[2] !== 'submit_question') {
    refuse('unexpected_phases', `phases are [${phases.join(', ')}]; expected [reserve_submission, ${approvePhase}, submit_question]`);
  }
  const [reserve, approve, submit] = calls as [PlanCall, PlanCall, PlanCall];
  expectTo(reserve, 0, registry, 'ContentRegistry');
  const [commitment] = decode(contentRegistryAbi, reserve, 0, 'reserveSubmission') as [Hex];
  expectApprove(approve, 1, tokenAddress(ctx.chain, ask.bounty.asset), escrow, ask.bounty.amount, 'QuestionRewardPoolEscrow');
  expectTo(submit, 2, registry, 'ContentRegistry');

  let expected: Hex;
  if (ask.isBundle) {
    type BundleQuestion = {
      contextUrl: string;
      imageUrls: string[];
      videoUrl: string;
      title: string;
      tags: string;
      categoryId: bigint;
      details: unknown;
      salt: Hex;
      spec: unknown;
    };
    const [questions, rewardTerms, roundConfig] = decode(contentRegistryAbi, submit, 2, 'submitQuestionBundleWithRewardAndRoundConfig') as [
      BundleQuestion[],
      unknown,
      unknown,
    ];
    if (questions.length !== ask.questions.length)
      refuse('question_mismatch', `the bundle has ${questions.length} questions, the file ${ask.questions.length}`, {
        call: 2,
        phase: submit.phase,
      });
    questions.forEach((q, qi) => {
      const args = [q.contextUrl, q.imageUrls, q.videoUrl, q.title, q.tags, q.categoryId, q.details, q.salt, q.spec];
      checkQuestionArgs(ctx, args, ask.questions[qi]!, qi, 2, submit.phase, `questions[${qi}].`);
    });
    checkTerms(ctx, rewardTerms, roundConfig, 2, submit.phase);
    expected = bundleRevealCommitment(ask, ctx.hashes, ctx.signer);
  } else {
    const args = decode(contentRegistryAbi, submit, 2, 'submitQuestionWithRewardAndRoundConfig');
    checkQuestionArgs(ctx, args, ask.questions[0]!, 0, 2, submit.phase);
    checkTerms(ctx, args[8], args[9], 2, submit.phase);
    checkConfidentiality(args[11], ask.questions[0]!, 2, submit.phase);
    expected = revealCommitment(ask, ctx.hashes, ctx.signer);
  }
  if (!sameHex(commitment, expected)) {
    refuse(
      'reveal_commitment_mismatch',
      `the reservation ${commitment} does not commit to this question from this wallet (expected ${expected})`,
      { call: 0, phase: reserve.phase },
    );
  }
  const spender = objectField(response, 'payment')?.spender;
  if (spender !== undefined && !sameAddress(spender, escrow))
    refuse('wrong_spender', `payment.spender ${String(spender)} is not the trusted QuestionRewardPoolEscrow`);
  return calls;
}

function checkConfidentiality(got: unknown, q: NormalizedQuestion, i: number, phase: string): void {
  const want = confidentialityTuple(q);
  const g = got as typeof want;
  field(
    g.gated === want.gated && g.bondAsset === want.bondAsset && g.bondAmount === want.bondAmount && g.flags === want.flags,
    i,
    phase,
    'confidentiality',
    JSON.stringify(g, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
    JSON.stringify(want, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
  );
}

// ---- x402 (chain.md §8) ----

/** The signed ReceiveWithAuthorization message: the authorization the nonce binds, and the nonce. */
export interface X402Message extends X402Authorization {
  nonce: Hex;
}

const AUTH_FIELDS = ['from', 'to', 'value', 'validAfter', 'validBefore', 'nonce'];
const AUTH_TYPES = RECEIVE_WITH_AUTHORIZATION.map((f) => [f.name, f.type]);

export function bonusAwarder(ctx: GuardContext): Hex {
  return (ctx.ask.feedbackBonus?.awarder ?? ctx.signer).toLowerCase() as Hex;
}

/** chain.md §8.2 in full; returns the typed data to sign. `now` is the chain's time in seconds. */
export function checkX402Request(ctx: GuardContext, response: unknown, now: number) {
  expectObject(response, 'ask response');
  const ask = ctx.ask;
  if (ask.bounty.asset !== 'USDC' || (ask.feedbackBonus && ask.feedbackBonus.asset !== 'USDC') || ask.questions.length !== 1) {
    refuse('x402_not_applicable', 'x402 funds only a single-question USDC bounty (and a USDC bonus)');
  }
  const req = objectField(response, 'x402AuthorizationRequest');
  if (!req) refuse('x402_missing', 'the response carries no x402AuthorizationRequest');
  const td = objectField(req, 'eip712') ?? objectField(req, 'typedData');
  if (!td) refuse('x402_missing', 'the authorization request has no eip712 typed data');
  if (td.primaryType !== 'ReceiveWithAuthorization')
    refuse('x402_wrong_type', `typed data is ${String(td.primaryType)}, not ReceiveWithAuthorization`);
  const types: Record<string, unknown> = { ...(objectField(td, 'types') ?? {}) };
  delete types.EIP712Domain;
  const typeNames = Object.keys(types);
  const fields = types.ReceiveWithAuthorization;
  const isField = (f: unknown, k: number) =>
    objectField({ f }, 'f')?.name === AUTH_TYPES[k]![0] && objectField({ f }, 'f')?.type === AUTH_TYPES[k]![1];
  if (typeNames.length !== 1 || !Array.isArray(fields) || fields.length !== 6 || fields.some((f, k) => !isField(f, k))) {
    refuse('x402_wrong_type', 'typed data types are not exactly ReceiveWithAuthorization(from,to,value,validAfter,validBefore,nonce)');
  }
  const msg = objectField(td, 'message') ?? {};
  if (Object.keys(msg).sort().join() !== [...AUTH_FIELDS].sort().join())
    refuse('x402_wrong_message', 'the message does not have exactly the six authorization fields');
  if (req.authorization !== undefined) {
    const a = objectField(req, 'authorization') ?? refuse('x402_wrong_message', 'authorization is not an object');
    if (Object.keys(a).sort().join() !== [...AUTH_FIELDS].sort().join())
      refuse('x402_wrong_message', 'authorization does not have exactly the six fields');
    for (const k of AUTH_FIELDS) {
      const agree =
        k === 'from' || k === 'to'
          ? sameAddress(a[k], msg[k])
          : k === 'nonce'
            ? sameHex(a[k], msg[k])
            : integerOf(a[k], `authorization.${k}`) === integerOf(msg[k], `message.${k}`);
      if (!agree) refuse('x402_wrong_message', `authorization.${k} differs from the signed message`);
    }
  }
  const d = objectField(td, 'domain') ?? {};
  if (Object.keys(d).sort().join() !== 'chainId,name,verifyingContract,version')
    refuse('x402_wrong_domain', 'the EIP-712 domain must have exactly chainId, name, verifyingContract, version');
  const usdc = ctx.chain.tokens.USDC;
  if (d.version !== (usdc.eip712?.version ?? '2')) refuse('x402_wrong_domain', `domain version ${String(d.version)} is not "2"`);
  if (d.name !== usdc.eip712?.name)
    refuse('x402_wrong_domain', `domain name "${String(d.name)}" is not "${usdc.eip712?.name}" for chain ${ctx.chain.chainId}`);
  if (Number(d.chainId) !== ctx.chain.chainId)
    refuse('x402_wrong_domain', `domain chainId ${String(d.chainId)} is not ${ctx.chain.chainId}`);
  if (!sameAddress(d.verifyingContract, tokenAddress(ctx.chain, 'USDC')))
    refuse('x402_wrong_token', `verifyingContract ${String(d.verifyingContract)} is not the trusted USDC`);
  const submitter = trusted(ctx.chain, 'x402QuestionSubmitter');
  const integer = (v: unknown) =>
    typeof v === 'bigint' ? v : typeof v === 'string' || typeof v === 'number' ? integerOrUndefined(v) : undefined;
  const amounts = [integer(msg.value), integer(msg.validAfter), integer(msg.validBefore)] as const;
  if (amounts.some((a) => a === undefined)) refuse('x402_wrong_message', 'the authorization amounts are not integers');
  const m: X402Message = {
    from: msg.from as Hex,
    to: msg.to as Hex,
    value: amounts[0]!,
    validAfter: amounts[1]!,
    validBefore: amounts[2]!,
    nonce: msg.nonce as Hex,
  };
  if (!sameAddress(m.from, ctx.signer)) refuse('x402_wrong_from', `the authorization is from ${m.from}, not this wallet`);
  if (!sameAddress(m.to, submitter))
    refuse('x402_wrong_recipient', `the authorization pays ${m.to}, not the trusted X402QuestionSubmitter ${submitter}`);
  const value = sameAssetTotal(ask);
  if (m.value !== value) refuse('x402_wrong_value', `the authorization moves ${m.value}, the ask is ${value}`);
  if (ask.maxPaymentAmount !== null && m.value > ask.maxPaymentAmount)
    refuse('spend_cap', `the authorization moves ${m.value}, above maxPaymentAmount`);
  if (m.validBefore <= m.validAfter) refuse('x402_validity', 'validBefore is not after validAfter');
  if (m.validBefore > BigInt(now + 86_400))
    refuse('x402_validity', `the authorization stays valid until ${m.validBefore}, more than 24 hours from now`);
  if (!/^0x[0-9a-fA-F]{64}$/.test(String(m.nonce))) refuse('x402_wrong_nonce', 'the nonce is not 32 bytes');
  const bonus = ask.feedbackBonus ? { amount: ask.feedbackBonus.amount, awarder: bonusAwarder(ctx), executeBy: m.validBefore } : undefined;
  const addresses = {
    contentRegistry: trusted(ctx.chain, 'contentRegistry'),
    questionRewardPoolEscrow: trusted(ctx.chain, 'questionRewardPoolEscrow'),
    x402QuestionSubmitter: submitter,
    feedbackBonusEscrow: ask.feedbackBonus ? trusted(ctx.chain, 'feedbackBonusEscrow') : undefined,
  };
  const nonce = x402Nonce(
    ask,
    ctx.hashes,
    addresses,
    { from: ctx.signer, to: submitter, value, validAfter: m.validAfter, validBefore: m.validBefore },
    bonus,
  );
  if (!sameHex(m.nonce, nonce)) refuse('x402_wrong_nonce', `the nonce is not bound to this ask (expected ${nonce})`);
  return {
    domain: { name: String(d.name), version: String(d.version), chainId: ctx.chain.chainId, verifyingContract: d.verifyingContract as Hex },
    types: { ReceiveWithAuthorization: RECEIVE_WITH_AUTHORIZATION },
    primaryType: 'ReceiveWithAuthorization' as const,
    message: m,
  };
}

/** The one-call x402 plan embeds exactly what was signed. */
export function checkX402Plan(ctx: GuardContext, response: unknown, signed: X402Message, signature: Hex): PlanCall[] {
  expectObject(response, 'ask response');
  const calls = checkPlanShape(response.transactionPlan, 1, 'x402');
  const call = calls[0]!;
  if (call.phase !== 'submit_x402_question') refuse('unexpected_phases', `phase ${call.phase}, expected submit_x402_question`, { call: 0 });
  expectTo(call, 0, trusted(ctx.chain, 'x402QuestionSubmitter'), 'X402QuestionSubmitter');
  try {
    decodeFunctionData({ abi: x402LegacyAbi, data: call.data });
    refuse('legacy_overload', 'the plan uses a legacy x402 overload without confidentiality; loopsign never signs those', {
      call: 0,
      phase: call.phase,
    });
  } catch (error) {
    if (error instanceof RefusedError) throw error;
  }
  const bonus = ctx.ask.feedbackBonus;
  const fn = bonus ? 'submitQuestionWithX402OneShotPayment' : 'submitQuestionWithX402Payment';
  const args = decode(x402SubmitterAbi, call, 0, fn);
  checkQuestionArgs(ctx, args, ctx.ask.questions[0]!, 0, 0, call.phase);
  checkTerms(ctx, args[8], args[9], 0, call.phase);
  checkConfidentiality(args[11], ctx.ask.questions[0]!, 0, call.phase);
  const auth = (bonus ? args[13] : args[12]) as {
    from: Hex;
    to: Hex;
    value: bigint;
    validAfter: bigint;
    validBefore: bigint;
    nonce: Hex;
    v: number;
    r: Hex;
    s: Hex;
  };
  const sig = hexToSignature(signature);
  const v = Number(sig.v ?? BigInt((sig.yParity ?? 0) + 27));
  const ok =
    sameAddress(auth.from, signed.from) &&
    sameAddress(auth.to, signed.to) &&
    auth.value === signed.value &&
    auth.validAfter === signed.validAfter &&
    auth.validBefore === signed.validBefore &&
    sameHex(auth.nonce, signed.nonce) &&
    auth.v === v &&
    sameHex(auth.r, sig.r) &&
    sameHex(auth.s, sig.s);
  if (!ok)
    refuse('x402_authorization_mismatch', 'the plan does not embed exactly the authorization this wallet signed', {
      call: 0,
      phase: call.phase,
      field: 'paymentAuthorization',
    });
  if (bonus) {
    const terms = args[12] as { amount: bigint; awarder: Hex; executeBy: bigint };
    if (terms.amount !== bonus.amount || !sameAddress(terms.awarder, bonusAwarder(ctx)) || terms.executeBy !== signed.validBefore) {
      refuse('bonus_mismatch', 'the one-shot feedback bonus terms differ from the ask file', {
        call: 0,
        phase: call.phase,
        field: 'feedbackBonusTerms',
      });
    }
  }
  return calls;
}

// ---- feedback bonus (chain.md §3.4) ----

/** What the chain says a bonus pool must target: the proven content and its open round (issue 11 §2). */
export interface BonusTarget {
  /** The content id proven from this wallet's own submission receipt. */
  contentId: string;
  /** The voting engine's current round of that content. */
  roundId: bigint;
  /** That round's start (chain time). */
  roundStart: bigint;
  /** The chain's latest block time. */
  now: bigint;
}

/**
 * The bonus plan is checked against the file and the chain only: content id = the proven submission, round = the
 * engine's current round, feedbackClosesAt = the file's when given, else after now and no later than the round's
 * start plus the file's question duration (what the live service computes). The service's own fields are not used.
 */
export function checkBonusPlan(ctx: GuardContext, bonus: unknown, target: BonusTarget): PlanCall[] {
  expectObject(bonus, 'feedback bonus');
  const want = ctx.ask.feedbackBonus;
  if (!want) refuse('bonus_not_requested', 'the service returned a feedback bonus plan, but the ask file has no feedbackBonus');
  const calls = checkPlanShape(bonus.transactionPlan, 2, 'feedback bonus');
  const suffix = want.asset === 'USDC' ? 'usdc' : 'lrep';
  if (calls[0]!.phase !== `approve_feedback_bonus_${suffix}` || calls[1]!.phase !== 'create_feedback_bonus_pool') {
    refuse('unexpected_phases', `bonus phases are [${calls.map((c) => c.phase).join(', ')}]`);
  }
  const escrow = trusted(ctx.chain, 'feedbackBonusEscrow');
  expectApprove(calls[0]!, 0, tokenAddress(ctx.chain, want.asset), escrow, want.amount, 'FeedbackBonusEscrow');
  expectTo(calls[1]!, 1, escrow, 'FeedbackBonusEscrow');
  const [cid, roundId, asset, amount, closesAt, awarder] = decode(
    feedbackBonusEscrowAbi,
    calls[1]!,
    1,
    'createFeedbackBonusPoolWithAsset',
  ) as [bigint, bigint, number, bigint, bigint, Hex];
  const phase = calls[1]!.phase;
  if (cid.toString() !== target.contentId)
    refuse(
      'bonus_wrong_content',
      `the pool is for question ${cid}, but this wallet's submission is question ${target.contentId} (read from its receipt)`,
      { call: 1, phase, field: 'contentId' },
    );
  if (roundId !== target.roundId)
    refuse(
      'bonus_wrong_round',
      `the pool is for round ${roundId}, but question ${target.contentId} is in round ${target.roundId} on chain`,
      { call: 1, phase, field: 'roundId' },
    );
  if (want.feedbackClosesAt !== undefined) {
    field(closesAt.toString() === want.feedbackClosesAt, 1, phase, 'feedbackClosesAt', closesAt, want.feedbackClosesAt);
  } else {
    const latest = target.roundStart + BigInt(ctx.ask.roundConfig.maxDuration);
    if (closesAt <= target.now || closesAt > latest) {
      refuse(
        'bonus_wrong_close',
        `feedbackClosesAt ${closesAt} is outside what the file allows (after now, ${target.now}, and no later than the round's start plus the question duration, ${latest})`,
        { call: 1, phase, field: 'feedbackClosesAt' },
      );
    }
  }
  field(asset === ASSET_ENUM[want.asset], 1, phase, 'asset', asset, ASSET_ENUM[want.asset]);
  field(amount === want.amount, 1, phase, 'amount', amount, want.amount);
  field(sameAddress(awarder, bonusAwarder(ctx)), 1, phase, 'awarder', awarder, bonusAwarder(ctx));
  return calls;
}
