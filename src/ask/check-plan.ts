// The guard, offline: a service answer obtained elsewhere (an agent on the public MCP endpoint, an auditor) checked
// against the user's own ask with exactly the guards the signing path runs — no network, no keystore. Also the
// pieces the ask flow composes its guard context from, so both run the same code.
import { keccak256, verifyTypedData, type Hex } from 'viem';
import type { ChainConfig } from '../chains/table.js';
import { RECEIVE_WITH_AUTHORIZATION } from '../protocol/abi.js';
import { RefusedError, UsageError } from '../errors.js';
import { sameAddress } from '../hex.js';
import { fewBasePointMultiplications } from '../wallet/base-point.js';
import { defaultPaymentMode, type NormalizedAsk } from '../protocol/ask-normalize.js';
import { getProfile } from '../protocol/profiles/index.js';
import { computeAskHashes, normalizeMetadataBase, type ResultSpecResolver } from '../protocol/ask-hashes.js';
import type { Translation } from '../protocol/profiles/types.js';
import { TEMPLATES, resultSpecHash } from '../protocol/templates.js';
import { roundContext } from '../vote/commit.js';
import type { BuiltCommit } from '../vote/build.js';
import {
  checkAskEnvelope,
  checkBonusPlan,
  checkWalletPlan,
  checkX402Plan,
  checkX402Request,
  refuse,
  type BonusTarget,
  type GuardContext,
  type PlanCall,
  type X402Message,
} from '../wallet/plan-guard.js';
import { checkRatingPlan } from '../wallet/rating-guard.js';
import { checkAskBody } from './ask-body.js';
import { arrayField, isDoc, objectField, type ServiceDoc } from '../service/doc.js';

/** Result-spec hashes per template, each recomputed from the template's own fields (a mismatch is refused). */
export function templateResolverFrom(list: unknown): ResultSpecResolver {
  const byId = new Map<string, Hex>();
  for (const t of Array.isArray(list) ? list : []) {
    // An entry without an id or vote semantics offers no template loopsign could use; semantics that are not two
    // texts cannot be what the service hashed.
    const semantics = objectField(t, 'voteSemantics');
    if (!isDoc(t) || typeof t.id !== 'string' || !semantics) continue;
    if (typeof semantics.up !== 'string' || typeof semantics.down !== 'string')
      refuse('template_inconsistent', `template ${t.id}: its vote semantics are not an {up, down} pair of texts`);
    const recomputed = resultSpecHash(t.id, templateVersion(t, t.id), { up: semantics.up, down: semantics.down });
    if (t.resultSpecHash !== undefined && String(t.resultSpecHash).toLowerCase() !== recomputed) {
      refuse('template_inconsistent', `template ${t.id}: its resultSpecHash does not match its own vote semantics`);
    }
    byId.set(t.id, recomputed);
  }
  return (id: string) => {
    const h = byId.get(id);
    if (!h) throw new UsageError('unknown_template', `the service does not offer template "${id}"`, { hint: 'see `loopsign templates`' });
    return h;
  };
}

/** A template's version: an integer (a number or its digits), 1 when absent; anything else is refused (exit 5). */
function templateVersion(t: ServiceDoc, id: string): number {
  const v = t.version ?? 1;
  const n = typeof v === 'string' && /^[0-9]{1,15}$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
    refuse('malformed_response', `template ${id}: its version ${JSON.stringify(v)} is not an integer`);
  return n;
}

/** The profile's own template table, for offline checks without the service's list. */
export const builtinTemplateResolver: ResultSpecResolver = templateResolverFrom(
  TEMPLATES.map((t) => ({ id: t.id, version: t.version, voteSemantics: t.voteSemantics })),
);

/** The metadata base the service names, when it is a public https URL without query or fragment. */
export function publicMetadataBase(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const u = new URL(value);
    return u.protocol === 'https:' && !u.search && !u.hash ? normalizeMetadataBase(value) : undefined;
  } catch {
    return undefined;
  }
}

/** What every ask guard checks against: the file's ask, this wallet, the trusted chain, the recomputed hashes. */
export function askGuardContext(
  chain: ChainConfig,
  wallet: string,
  ask: NormalizedAsk,
  resolver: ResultSpecResolver,
  metadataBase?: string,
): GuardContext {
  const signer = wallet.toLowerCase() as Hex;
  return { chain, signer, ask, hashes: computeAskHashes(ask, signer, resolver, { metadataBase }), verifyPayload: true };
}

export type AnswerKind = 'wallet_plan' | 'x402_request' | 'x402_plan' | 'bonus_plan' | 'rating_plan';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface CheckPlanInput {
  /** The ask body (as sent, or the user's file), or the rating prepare arguments. */
  ask: unknown;
  /** The service's JSON answer. */
  response: unknown;
  chain: ChainConfig;
  /** The wallet that would sign; else the ask's walletAddress. */
  wallet?: string;
  /** Unix seconds: the clock for authorization validity and seed translation. */
  now: number;
  /** The service's templates answer (GET /api/agent/templates); default: the profile's table. */
  templates?: unknown;
}

export interface CheckPlanResult {
  /** Every check passed. */
  passed: boolean;
  kind: AnswerKind;
  wallet: string;
  chainId: number;
  operationKey?: string;
  calls: number;
  translations: Translation[];
  checks: Check[];
  /** What only the chain can prove, and is therefore not checked offline. */
  needsChain: string[];
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

const isRatingRequest = (ask: ServiceDoc) => typeof ask.commitHash === 'string' && ask.ciphertext !== undefined;

/** A service error envelope is not a plan: nothing to check (unusable input, exit 2). */
function rejectErrorEnvelope(response: ServiceDoc): void {
  if (typeof response.code === 'string' && typeof response.message === 'string' && response.transactionPlan === undefined) {
    throw new UsageError(
      'not_a_plan',
      `the answer is the service's error ${response.code}: ${String(response.message).slice(0, 300)} — there is no plan to check`,
    );
  }
}

function kindOf(response: ServiceDoc): AnswerKind {
  rejectErrorEnvelope(response);
  if (objectField(objectField(response, 'feedbackBonus'), 'transactionPlan')) return 'bonus_plan';
  const calls = arrayField(objectField(response, 'transactionPlan'), 'calls');
  if (calls && calls.length > 0) return calls.some((c) => isDoc(c) && c.phase === 'submit_x402_question') ? 'x402_plan' : 'wallet_plan';
  if (objectField(response, 'x402AuthorizationRequest')) return 'x402_request';
  throw new UsageError(
    'not_a_plan',
    'the answer is neither an ask plan, an x402 authorization request, a bonus confirmation nor a rating prepare',
  );
}

/** Runs one guard; a refusal becomes a failed check (the other guards still run and report). */
function run<T>(checks: Check[], name: string, ok: string, fn: () => T): T | undefined {
  try {
    const value = fn();
    checks.push({ name, ok: true, detail: ok });
    return value;
  } catch (error) {
    if (error instanceof RefusedError) {
      checks.push({ name, ok: false, detail: error.message.replace(/^refused: /, '') });
      return undefined;
    }
    throw error;
  }
}

function walletOf(input: CheckPlanInput, ask: ServiceDoc): string {
  const w = input.wallet ?? ask.walletAddress ?? ask.agentWalletAddress;
  if (typeof w !== 'string' || !ADDRESS.test(w))
    throw new UsageError('wallet_required', 'name the signing wallet: --wallet <address> (or walletAddress in the ask file)');
  if (input.wallet !== undefined && typeof ask.walletAddress === 'string' && !sameAddress(ask.walletAddress, input.wallet)) {
    throw new UsageError('wallet_mismatch', `the ask names wallet ${ask.walletAddress}, not ${input.wallet}`);
  }
  return w.toLowerCase();
}

function checkRating(input: CheckPlanInput, args: ServiceDoc, response: ServiceDoc, wallet: string): CheckPlanResult {
  const checks: Check[] = [];
  /**
   * A field of the rating request in its form (a JSON number is read as its digits, only when it is a safe integer:
   * beyond 2^53 JSON.parse has already rounded it to another number whose digits pass), or a refusal (exit 2).
   */
  const field = (name: string, form: RegExp): string => {
    const v = args[name];
    const text = typeof v === 'string' ? v : typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : '';
    if (!form.test(text)) throw new UsageError('invalid_rating_request', `the rating request's ${name} is missing or malformed`);
    return text;
  };
  const [contentId, roundId, targetRound, stakeWei] = ['contentId', 'roundId', 'targetRound', 'stakeWei'].map((k) => field(k, /^\d+$/)) as [
    string,
    string,
    string,
    string,
  ];
  const bps = Number(field('roundReferenceRatingBps', /^\d{1,15}$/));
  const [commitHash, drandChainHash] = ['commitHash', 'drandChainHash'].map((k) => field(k, /^0x[0-9a-fA-F]{64}$/) as Hex) as [Hex, Hex];
  const ciphertext = field('ciphertext', /^0x([0-9a-fA-F]{2})+$/) as Hex;
  const frontend = field('frontend', ADDRESS) as Hex;
  const commit: BuiltCommit = {
    roundId,
    roundReferenceRatingBps: bps,
    targetRound,
    drandChainHash,
    commitHash,
    ciphertext,
    stakeWei,
    stakeAtomicUnits: stakeWei,
    frontend,
    // Only the round context is public; the vote itself stays with the voter.
    secret: {
      isUp: false,
      predictedUpBps: 0,
      salt: '0x',
      commitKey: '0x',
      ciphertextHash: keccak256(ciphertext),
      roundContext: roundContext(BigInt(roundId), bps).toString(),
    },
  };
  run(checks, 'drand_network', `the commit targets the pinned ${input.chain.drand.name} network`, () => {
    if (drandChainHash.replace(/^0x/, '').toLowerCase() !== input.chain.drand.chainHash)
      refuse('untrusted_drand', `the commit names drand chain ${drandChainHash}, not the pinned ${input.chain.drand.name}`);
  });
  const calls = run(checks, 'rating_plan', 'every call is the trusted contract with exactly the commit sent (stake approval exact)', () =>
    checkRatingPlan(input.chain, response, commit, BigInt(contentId)),
  );
  return {
    passed: checks.every((c) => c.ok),
    kind: 'rating_plan',
    wallet,
    chainId: input.chain.chainId,
    calls: calls?.length ?? 0,
    translations: [],
    checks,
    needsChain: [
      "that the commit hash encrypts the vote you meant (direction, prediction, salt) needs the voter's own record of the commit (the rate journal)",
    ],
  };
}

/** The signed authorization a follow-up embeds, from the ask body's paymentAuthorization. */
function signedAuthorization(ask: ServiceDoc): { message: X402Message; signature: Hex } {
  const a = objectField(ask, 'paymentAuthorization');
  if (!a || typeof a.signature !== 'string' || !/^0x[0-9a-fA-F]{130}$/.test(a.signature)) {
    throw new UsageError(
      'authorization_required',
      'an x402 plan embeds a signed authorization: give the ask body that was sent with it (with paymentAuthorization {from, to, value, validAfter, validBefore, nonce, signature})',
    );
  }
  const integer = (v: unknown): bigint => {
    if ((typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) || (typeof v === 'string' && /^(0|[1-9][0-9]{0,77})$/.test(v)))
      return BigInt(v);
    throw new UsageError('authorization_required', 'paymentAuthorization amounts and times must be integers');
  };
  const hex = (v: unknown, form: RegExp, what: string): Hex => {
    if (typeof v === 'string' && form.test(v)) return v as Hex;
    throw new UsageError(
      'authorization_required',
      `paymentAuthorization.${what} must be ${form === ADDRESS ? 'an address' : '0x + 64 hex'}`,
    );
  };
  return {
    message: {
      from: hex(a.from, ADDRESS, 'from'),
      to: hex(a.to, ADDRESS, 'to'),
      value: integer(a.value),
      validAfter: integer(a.validAfter),
      validBefore: integer(a.validBefore),
      nonce: hex(a.nonce, /^0x[0-9a-fA-F]{64}$/, 'nonce'),
    },
    signature: a.signature as Hex,
  };
}

export async function checkPlan(input: CheckPlanInput): Promise<CheckPlanResult> {
  if (!isDoc(input.ask)) throw new UsageError('invalid_ask', 'the ask must be a JSON object');
  if (!isDoc(input.response)) throw new UsageError('not_a_plan', 'the answer must be a JSON object');
  const askJson = input.ask;
  const response = input.response;
  const wallet = walletOf(input, askJson);
  if (isRatingRequest(askJson)) {
    rejectErrorEnvelope(response);
    return checkRating(input, askJson, response, wallet);
  }

  // The ask first, exactly as the signing path loads it: a file the service would refuse is unusable input whatever
  // the answer says.
  const { ask, translations } = checkAskBody(askJson, 'ask', input.now, getProfile(input.chain.profile));
  if (ask.chainId !== input.chain.chainId)
    throw new UsageError('chain_mismatch', `the ask is for chain ${ask.chainId}, the configured chain is ${input.chain.chainId}`, {
      hint:
        input.chain.chainId === 31337
          ? 'this check is configured for the local sandbox chain (31337): check a plan for the ask on that chain'
          : `run with --chain-id ${ask.chainId}`,
    });
  const kind = kindOf(response);
  const resolver =
    input.templates === undefined
      ? builtinTemplateResolver
      : templateResolverFrom(isDoc(input.templates) ? input.templates.templates : input.templates);
  const g = askGuardContext(
    input.chain,
    wallet,
    ask,
    resolver,
    publicMetadataBase(response.questionMetadataBaseUrl ?? objectField(response, 'x402AuthorizationRequest')?.questionMetadataBaseUrl),
  );
  const checks: Check[] = [];
  const needsChain: string[] = [];
  let calls: PlanCall[] | undefined;
  let operationKey: string | undefined;
  const mode = ask.paymentMode ?? defaultPaymentMode(ask);

  if (kind !== 'bonus_plan') {
    operationKey = run(checks, 'envelope', `chain, wallet, operationKey ${g.hashes.operationKey} and payment within maxPaymentAmount`, () =>
      checkAskEnvelope(g, response),
    );
  }
  if (kind === 'wallet_plan') {
    if (mode !== 'wallet_calls')
      checks.push({ name: 'payment_mode', ok: false, detail: `the ask asks for ${mode}, the answer is a wallet-calls plan` });
    calls = run(
      checks,
      'wallet_plan',
      'reserve, exact approval to the trusted escrow, submit of exactly this question (reveal commitment recomputed)',
      () => checkWalletPlan(g, response),
    );
  } else if (kind === 'x402_request') {
    run(
      checks,
      'x402_authorization',
      'ReceiveWithAuthorization of exactly the ask total to the trusted submitter, nonce bound to this ask, valid at most 24 h',
      () => checkX402Request(g, response, input.now),
    );
  } else if (kind === 'x402_plan') {
    const signed = signedAuthorization(askJson);
    // The authorization as signed, checked as the signing path checks it before signing (over the trusted domain).
    run(
      checks,
      'x402_authorization',
      'the signed ReceiveWithAuthorization moves exactly the ask total to the trusted submitter, nonce bound to this ask, valid at most 24 h',
      () => checkX402Request(g, { x402AuthorizationRequest: { eip712: x402TypedData(input.chain, signed.message) } }, input.now),
    );
    fewBasePointMultiplications(); // the recovery multiplies by the base point
    const signer = await verifyTypedData({
      address: wallet as Hex,
      ...x402TypedData(input.chain, signed.message),
      signature: signed.signature,
    } as Parameters<typeof verifyTypedData>[0]).catch(() => false);
    checks.push(
      signer
        ? { name: 'x402_signer', ok: true, detail: `signed by ${wallet} over the trusted USDC domain of chain ${input.chain.chainId}` }
        : {
            name: 'x402_signer',
            ok: false,
            detail: `paymentAuthorization.signature is not this wallet's (${wallet}) signature of the authorization over the trusted USDC domain`,
          },
    );
    calls = run(checks, 'x402_plan', 'one call to the trusted submitter embedding exactly the signed authorization and this question', () =>
      checkX402Plan(g, response, signed.message, signed.signature),
    );
  } else {
    const bonus = objectField(response, 'feedbackBonus') ?? {};
    const target = offlineBonusTarget(response, bonus, ask, input.now);
    calls = run(
      checks,
      'bonus_plan',
      "exact approval to the trusted bonus escrow and a pool of exactly the file's bonus, for the question and round the answer names",
      () => checkBonusPlan(g, bonus, target),
    );
    needsChain.push(
      `that question ${target.contentId} is the one this wallet submitted and paid for (its submit transaction's receipt), that round ${target.roundId} is its current round and when that round started: the signing path proves these on chain before any bonus is funded; offline they are taken from the answer itself`,
    );
  }
  // Passing says the plan is what the file asks for, not that it is still unpaid: offline there is no spend ledger.
  needsChain.push(
    kind === 'bonus_plan'
      ? 'whether this wallet already funded a bonus for this question (a re-offered plan passes again, and executing it again creates and pays a second pool): the signing path refuses that from its journal; check FeedbackBonusPoolCreated events or `loopsign status` first'
      : "whether this plan or authorization was already signed or paid (a re-offered plan passes again): the signing path refuses a second payment from its journal; check the wallet's transactions or `loopsign status` first",
  );
  return {
    passed: checks.every((c) => c.ok),
    kind,
    wallet,
    chainId: input.chain.chainId,
    ...(operationKey ? { operationKey } : {}),
    calls: calls?.length ?? 0,
    translations,
    checks,
    needsChain,
  };
}

/**
 * Offline, the chain facts a bonus plan is checked against (proven content, current round, its start, chain time) can
 * only come from the answer itself and the given clock: the round is assumed to have started one question duration
 * before the close time the answer reports. Reported as needing the chain.
 */
function offlineBonusTarget(response: ServiceDoc, bonus: ServiceDoc, ask: NormalizedAsk, now: number): BonusTarget {
  const contentId = String(
    (Array.isArray(response.contentIds) ? response.contentIds[0] : undefined) ?? response.contentId ?? bonus.contentId ?? '',
  );
  if (!/^\d+$/.test(contentId)) throw new UsageError('not_a_plan', 'the bonus confirmation names no contentId');
  const int = (v: unknown, what: string) => {
    if (!/^\d+$/.test(String(v ?? ''))) throw new UsageError('not_a_plan', `the bonus confirmation names no ${what}`);
    return BigInt(String(v));
  };
  const closes = int(bonus.feedbackClosesAt, 'feedbackClosesAt');
  return { contentId, roundId: int(bonus.roundId, 'roundId'), roundStart: closes - BigInt(ask.roundConfig.maxDuration), now: BigInt(now) };
}

function x402TypedData(chain: ChainConfig, m: X402Message) {
  const usdc = chain.tokens.USDC;
  return {
    domain: { chainId: chain.chainId, name: usdc.eip712?.name, verifyingContract: usdc.address, version: usdc.eip712?.version ?? '2' },
    types: { ReceiveWithAuthorization: RECEIVE_WITH_AUTHORIZATION },
    primaryType: 'ReceiveWithAuthorization' as const,
    message: { from: m.from, to: m.to, value: m.value, validAfter: m.validAfter, validBefore: m.validBefore, nonce: m.nonce },
  };
}
