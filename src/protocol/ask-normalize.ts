// Validation and normalisation of an ask body as the service parses it (service-api.md §5.1; chain.md §6.1, §7; the
// live corpus in test/fixtures/vectors/live is the oracle). Shared by the client (local validation before any network
// call, then hash recomputation) and the sandbox (which plays the service). The body must be live-shaped: a seed-shaped
// file is translated first (translateAsk, the profile's rules); seed fields reaching this parser are refused with the
// service's own answer. The caller's body is never changed.
import { AskFieldError, type AskProblem } from './ask-errors.js';
import { clientAskSchema, askSchema, didYouMeanAmountObject, didYouMeanAtomic, nearest, shapeProblems } from './ask-schema.js';
import { normalizeTargetAudience } from './ask-audience.js';
import { checkHeadToHead, checkTagsText, checkTitleText } from './ask-text.js';
import { isHostedDetailsUrl, normalizeContextUrl, normalizeDetailsUrl, normalizeImageUrl, normalizeVideoUrl } from './ask-urls.js';
import { DEFAULT_PROFILE, getProfile, type ServiceProfile } from './profiles/index.js';
import type { ServiceRejection, Translation } from './profiles/types.js';

export { AskFieldError, type AskProblem } from './ask-errors.js';
export { normalizeContextUrl, normalizeImageUrl, normalizeVideoUrl } from './ask-urls.js';

export type Asset = 'USDC' | 'LREP';
export const ASSET_ENUM: Record<Asset, number> = { LREP: 0, USDC: 1 };

export interface NormalizedBounty {
  asset: Asset;
  amount: bigint;
  requiredVoters: number;
  bountyEligibility: 0 | 8;
}

export interface NormalizedRoundConfig {
  /** The on-chain tuple: the service's rounds are one epoch, so epochDuration = maxDuration = questionDurationSeconds. */
  epochDuration: number;
  maxDuration: number;
  minVoters: number;
  maxVoters: number;
  questionDurationSeconds: number;
}

export interface Confidentiality {
  visibility: 'public' | 'gated';
  disclosurePolicy: 'private_forever' | 'after_settlement' | null;
  bond: { amount: string; asset: Asset } | null;
}

/** A question as the service records it (canonical payload and metadata); see onChainQuestion for the submit call. */
export interface NormalizedQuestion {
  title: string;
  contextUrl: string;
  imageUrls: string[];
  videoUrl: string;
  tags: string[];
  categoryId: bigint;
  detailsUrl: string;
  /** As given (the service keeps its letter case in the canonical payload); compare case-insensitively. */
  detailsHash: `0x${string}`;
  confidentiality: Confidentiality;
  templateId: string;
  templateVersion: number;
  templateInputs: Record<string, unknown> | null;
  targetAudience: Record<string, unknown> | null;
}

export interface NormalizedBonus {
  amount: bigint;
  asset: Asset;
  awarder?: `0x${string}`;
  /**
   * A close time the file asks for. Never set under rateloop-main-2026-08: that service takes no close time (the
   * bonus closes with the question), so a file naming one is refused before anything is sent.
   */
  feedbackClosesAt?: string;
}

export type PaymentMode = 'wallet_calls' | 'x402_authorization';

export interface NormalizedAsk {
  /** The service profile whose rules parsed it (and whose hash layout applies). */
  profileId: string;
  chainId: number;
  clientRequestId: string;
  bounty: NormalizedBounty;
  roundConfig: NormalizedRoundConfig;
  questions: NormalizedQuestion[];
  isBundle: boolean;
  feedbackBonus: NormalizedBonus | null;
  maxPaymentAmount: bigint | null;
  paymentMode: PaymentMode | null;
  walletAddress: `0x${string}` | null;
  dryRun: boolean;
}

export const ZERO_HASH = `0x${'0'.repeat(64)}` as const;
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{4,160}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const trimmed = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');
const given = (v: unknown) => v !== undefined && v !== null;
/** The service names a single `question` as questions[0] in its messages. */
const servicePath = (field: string) => field.replace(/^question(?=\.|$)/, 'questions[0]');

/** Decimal string of atomic units (the interface: all numeric quantities are decimal strings). */
export function decimalString(value: unknown, field: string, opts: { allowNumber?: boolean } = {}): bigint {
  if (typeof value === 'number' && opts.allowNumber && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  if (typeof value !== 'string')
    throw new AskFieldError(
      field,
      `${value === undefined ? 'is required: ' : ''}must be a decimal string of atomic units (1 USDC = "1000000"), e.g. "2500000" for 2.5 USDC${didYouMeanAtomic(value)}`,
    );
  if (!/^(0|[1-9][0-9]*)$/.test(value))
    throw new AskFieldError(
      field,
      `"${value}" is not a non-negative integer decimal string of atomic units (1 USDC = "1000000")${didYouMeanAtomic(value)}`,
    );
  return BigInt(value);
}

function smallInt(value: unknown, field: string, min: number, max: number): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^[0-9]+$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new AskFieldError(field, `must be an integer from ${min} to ${max}`);
  return n;
}

function assetOf(value: unknown, field: string, fallback: Asset): Asset {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string') throw new AskFieldError(field, 'must be "USDC" or "LREP"');
  const a = value.trim().toUpperCase() || fallback;
  if (a !== 'USDC' && a !== 'LREP') throw new AskFieldError(field, 'must be "USDC" or "LREP"');
  return a;
}

function normalizeTags(value: unknown, field: string): string[] {
  const raw = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : [];
  if (raw.some((t) => typeof t !== 'string')) throw new AskFieldError(field, 'entries must be strings');
  const tags = (raw as string[]).map((t) => t.trim()).filter(Boolean);
  if (tags.length === 0) throw new AskFieldError(field, 'needs 1 to 3 tags (an array, or a comma-separated string)');
  if (tags.length > 3) throw new AskFieldError(field, `may hold at most 3 tags, not ${tags.length}`);
  return tags;
}

function normalizeConfidentiality(value: unknown, field: string, profile: ServiceProfile): Confidentiality {
  if (value === undefined || value === null) return { visibility: 'public', disclosurePolicy: null, bond: null };
  if (!isObj(value)) throw new AskFieldError(field, 'must be an object');
  if (value.visibility !== undefined && typeof value.visibility !== 'string')
    throw new AskFieldError(`${field}.visibility`, 'must be "public" or "gated"');
  const visibility = trimmed(value.visibility) || 'public';
  if (visibility !== 'public' && visibility !== 'gated') throw new AskFieldError(`${field}.visibility`, 'must be "public" or "gated"');
  if (visibility === 'public') {
    if (given(value.bond)) throw new AskFieldError(`${field}.bond`, 'is only supported for gated questions');
    return { visibility: 'public', disclosurePolicy: null, bond: null };
  }
  let policy = trimmed(value.disclosurePolicy) || 'private_forever';
  if (policy === 'private_until_settlement') policy = 'after_settlement';
  if (policy !== 'private_forever' && policy !== 'after_settlement')
    throw new AskFieldError(`${field}.disclosurePolicy`, 'must be "private_forever" or "after_settlement"');
  // No bond given: the service records a zero LREP bond (and hashes it so).
  let bond = { ...profile.ask.gated.defaultBond };
  if (given(value.bond)) {
    if (!isObj(value.bond)) throw new AskFieldError(`${field}.bond`, 'must be {amount, asset}');
    const amount = decimalString(value.bond.amount ?? '0', `${field}.bond.amount`, { allowNumber: true });
    if (amount !== 0n && (amount < 1_000_000n || amount > 2n ** 64n - 1n))
      throw new AskFieldError(`${field}.bond.amount`, 'must be 0 or between 1000000 and 2^64-1');
    bond = { amount: amount.toString(), asset: assetOf(value.bond.asset, `${field}.bond.asset`, 'LREP') };
  }
  return { visibility: 'gated', disclosurePolicy: policy, bond };
}

export interface NormalizeOptions {
  /** Service origin for image and hosted-details URL checks (the sandbox knows its own; the client its base URL). */
  serviceOrigin?: string;
  /** Template ids the service offers, with their required inputs. */
  templates?: { id: string; requiredInputs: string[] }[];
  /** The service profile (default: the default profile). */
  profile?: ServiceProfile;
  /** loopsign's own rule for what it sends: maxPaymentAmount is required (the service takes an ask without it). */
  requireMaxPayment?: boolean;
}

function normalizeQuestion(q: unknown, field: string, top: Obj, options: NormalizeOptions, profile: ServiceProfile): NormalizedQuestion {
  if (!isObj(q))
    throw new AskFieldError(
      field,
      `must be an object, e.g. {"title": ${typeof q === 'string' && q.trim() ? JSON.stringify(q.trim().slice(0, 120)) : '"Should this agent ship release 42?"'}, "contextUrl": "https://example.com/page", "categoryId": "1", "tags": ["release"]}${typeof q === 'string' ? ' (the text goes in title)' : ''}`,
    );
  if (typeof q.title !== 'string' || q.title.trim() === '') throw new AskFieldError(`${field}.title`, 'is required');
  const title = q.title.trim();
  if (title.length > profile.ask.maxTitleLength)
    throw new AskFieldError(`${field}.title`, `must be ${profile.ask.maxTitleLength} characters or fewer`);
  checkTitleText(title, field, profile);

  let imageUrls: string[] = [];
  if (given(q.imageUrls)) {
    if (!Array.isArray(q.imageUrls)) throw new AskFieldError(`${field}.imageUrls`, 'must be an array of uploaded image URLs');
    imageUrls = q.imageUrls.map((u, i) => normalizeImageUrl(u, `${field}.imageUrls[${i}]`, options.serviceOrigin));
    if (imageUrls.length > 4) throw new AskFieldError(`${field}.imageUrls`, 'may hold at most 4 images');
    imageUrls = [...new Set(imageUrls)].sort();
  }
  const contextUrl = trimmed(q.contextUrl) ? normalizeContextUrl(q.contextUrl, `${field}.contextUrl`) : '';
  const videoUrl = trimmed(q.videoUrl) ? normalizeVideoUrl(q.videoUrl, `${field}.videoUrl`) : '';

  const detailsUrlRaw = trimmed(q.detailsUrl);
  const hashRaw = q.detailsHash;
  let detailsHash: `0x${string}` = ZERO_HASH;
  if (hashRaw !== undefined && hashRaw !== null && hashRaw !== '') {
    if (typeof hashRaw !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(hashRaw))
      throw new AskFieldError(`${field}.detailsHash`, 'must be 0x followed by 64 hex characters (the SHA-256 of the details text)');
    detailsHash = hashRaw as `0x${string}`;
  }
  const zeroHash = /^0x0{64}$/.test(detailsHash);
  if (detailsUrlRaw && zeroHash) throw new AskFieldError(`${field}.detailsHash`, 'is required when detailsUrl is given');
  if (!detailsUrlRaw && !zeroHash) throw new AskFieldError(`${field}.detailsUrl`, 'is required when detailsHash is given');
  const detailsUrl = detailsUrlRaw ? normalizeDetailsUrl(detailsUrlRaw, `${field}.detailsUrl`) : '';

  const confidentiality = normalizeConfidentiality(q.confidentiality ?? top.confidentiality, `${field}.confidentiality`, profile);
  if (videoUrl && imageUrls.length > 0)
    throw new AskFieldError(`${field}.videoUrl`, 'cannot be combined with imageUrls (use one or the other)');
  if (confidentiality.visibility === 'gated') {
    if (contextUrl || videoUrl) {
      throw new AskFieldError(
        `${field}.confidentiality.visibility`,
        `gated requires a service-hosted detailsUrl; external contextUrl and videoUrl are not allowed (remove ${field}.${contextUrl ? 'contextUrl' : 'videoUrl'})`,
        profile.ask.rejections.gatedExternalMedia(servicePath(field)),
      );
    }
    if (!detailsUrl)
      throw new AskFieldError(`${field}.detailsUrl`, 'is required for gated questions (upload the details to the service first)');
    if (!isHostedDetailsUrl(detailsUrl, options.serviceOrigin))
      throw new AskFieldError(
        `${field}.detailsUrl`,
        'must be a service-hosted details attachment (…/api/attachments/details/det_…) for gated questions',
      );
  }
  if (!contextUrl && imageUrls.length === 0 && !videoUrl && !(confidentiality.visibility === 'gated' && detailsUrl)) {
    throw new AskFieldError(field, 'needs at least one of contextUrl, imageUrls or videoUrl');
  }

  const tags = normalizeTags(q.tags, `${field}.tags`);
  checkTagsText(tags, `${field}.tags`, profile);
  if (q.categoryId === undefined || q.categoryId === null)
    throw new AskFieldError(`${field}.categoryId`, 'is required (a positive integer, e.g. "1")');
  const categoryId = decimalString(typeof q.categoryId === 'string' ? q.categoryId.trim() : q.categoryId, `${field}.categoryId`, {
    allowNumber: true,
  });
  if (categoryId === 0n) throw new AskFieldError(`${field}.categoryId`, 'must be a positive integer');
  const targetAudience = normalizeTargetAudience(q.targetAudience, `${field}.targetAudience`, profile.ask.targetAudience, (path) =>
    profile.ask.rejections.unknownAudienceField(servicePath(path)),
  );

  const templateId = trimmed(q.templateId) || trimmed(top.templateId) || 'generic_rating';
  const template = options.templates?.find((t) => t.id === templateId);
  if (options.templates && !template)
    throw new AskFieldError(`${field}.templateId`, `unknown template "${templateId}" (see \`loopsign templates\`)`);
  const versionRaw = given(q.templateVersion) ? q.templateVersion : given(top.templateVersion) ? top.templateVersion : 1;
  const templateVersion = smallInt(
    versionRaw,
    given(q.templateVersion) ? `${field}.templateVersion` : 'templateVersion',
    1,
    Number.MAX_SAFE_INTEGER,
  );
  if (templateVersion !== 1)
    throw new AskFieldError(`${field}.templateVersion`, `${templateVersion} is not offered for ${templateId} (only version 1)`);
  const inputsRaw = q.templateInputs === undefined ? top.templateInputs : q.templateInputs;
  if (inputsRaw !== undefined && inputsRaw !== null && !isObj(inputsRaw))
    throw new AskFieldError(q.templateInputs === undefined ? 'templateInputs' : `${field}.templateInputs`, 'must be an object');
  // A JSON round trip, as the service stores it: key order kept, undefined dropped.
  const templateInputs = isObj(inputsRaw) ? (JSON.parse(JSON.stringify(inputsRaw)) as Record<string, unknown>) : null;
  for (const input of template?.requiredInputs ?? []) {
    if (typeof templateInputs?.[input] !== 'string' || (templateInputs[input] as string).trim() === '') {
      throw new AskFieldError(`${field}.templateInputs.${input}`, `is required by the ${templateId} template`);
    }
  }
  checkHeadToHead({ title, templateId, templateInputs }, field, servicePath(field), profile);
  return {
    title,
    contextUrl,
    imageUrls,
    videoUrl,
    tags,
    categoryId,
    detailsUrl,
    detailsHash,
    confidentiality,
    templateId,
    templateVersion,
    templateInputs,
    targetAudience,
  };
}

export function normalizePaymentMode(value: unknown, field = 'paymentMode'): PaymentMode {
  if (value === 'wallet_calls' || value === 'agent_wallet') return 'wallet_calls';
  if (['x402_authorization', 'eip3009_usdc_authorization', 'eip3009_authorization', 'native_x402', 'x402'].includes(value as string))
    return 'x402_authorization';
  throw new AskFieldError(field, 'must be wallet_calls, eip3009_usdc_authorization, or x402_authorization');
}

export function isDryRun(body: Obj): boolean {
  const yes = (v: unknown) => v === true || v === 'true';
  return yes(body.dryRun) || yes(body.sandbox) || body.mode === 'dry_run' || body.executionMode === 'dry_run';
}

/** The service's default payment mode when none is given (service-api.md §5.5). */
export function defaultPaymentMode(ask: Pick<NormalizedAsk, 'bounty' | 'questions' | 'feedbackBonus'>): PaymentMode {
  const bonusOk = ask.feedbackBonus === null || ask.feedbackBonus.asset === 'USDC';
  return ask.bounty.asset === 'USDC' && ask.questions.length === 1 && bonusOk ? 'x402_authorization' : 'wallet_calls';
}

/** Total the ask may pull in the bounty's asset: the bounty plus a bonus in the same asset. */
export function sameAssetTotal(ask: Pick<NormalizedAsk, 'bounty' | 'feedbackBonus'>): bigint {
  const bonus = ask.feedbackBonus && ask.feedbackBonus.asset === ask.bounty.asset ? ask.feedbackBonus.amount : 0n;
  return ask.bounty.amount + bonus;
}

/** Seed-era fields the profile's service refuses: the field and the service's own answer. */
function rejectObsolete(body: Obj, question: Obj | undefined, profile: ServiceProfile): void {
  const bounty = isObj(body.bounty) ? body.bounty : {};
  const obsolete = profile.ask.obsoleteFields;
  for (const key of ['requiredSettledRounds', 'bountyStartBy', 'bountyWindowSeconds', 'feedbackWindowSeconds']) {
    const path = `bounty.${key}`;
    if (bounty[key] !== undefined)
      throw new AskFieldError(path, `is a seed-era field this service refuses; ${obsolete[path]!.message}`, obsolete[path]);
  }
  const rc = body.roundConfig ?? question?.roundConfig;
  const where = given(body.roundConfig) ? 'roundConfig' : 'question.roundConfig';
  if (isObj(rc)) {
    const key = profile.ask.obsoleteRoundKeys.find((k) => given(rc[k]));
    if (key)
      throw new AskFieldError(
        `${where}.${key}`,
        `is a seed-era field this service refuses; ${obsolete['roundConfig.epochDuration']!.message}`,
        obsolete['roundConfig.epochDuration'],
      );
  }
}

function normalizeRoundConfig(body: Obj, questions: unknown[], requiredVoters: number, profile: ServiceProfile): NormalizedRoundConfig {
  const defaults = profile.ask.roundDefaults;
  if (questions.length > 1) {
    questions.forEach((q, i) => {
      for (const key of ['roundConfig', 'roundPreset']) {
        if (isObj(q) && given(q[key])) throw new AskFieldError(`questions[${i}].${key}`, 'must be set at the top level for a bundle');
      }
    });
  }
  const first = isObj(questions[0]) ? questions[0] : {};
  const onQuestion = !given(body.roundConfig) && given(first.roundConfig);
  const rc = body.roundConfig ?? first.roundConfig;
  const presetRaw = body.roundPreset ?? first.roundPreset;
  const rcField = onQuestion ? 'question.roundConfig' : 'roundConfig';
  const presetField = given(body.roundPreset) ? 'roundPreset' : 'question.roundPreset';

  let preset: string | null = null;
  if (given(presetRaw) && presetRaw !== '') {
    if (typeof presetRaw !== 'string') throw new AskFieldError(presetField, 'must be a string');
    const key = presetRaw
      .trim()
      .replace(/[-\s]+/g, '_')
      .toLowerCase();
    if (!(key in profile.ask.presetAliases))
      throw new AskFieldError(presetField, `must be one of ${Object.keys(profile.ask.roundPresets).join(', ')} or default`);
    preset = profile.ask.presetAliases[key] ?? null;
  }
  if (!given(rc)) {
    if (preset) {
      const p = profile.ask.roundPresets[preset]!;
      const v = Math.max(p.voters, requiredVoters);
      return {
        questionDurationSeconds: p.questionDurationSeconds,
        epochDuration: p.questionDurationSeconds,
        maxDuration: p.questionDurationSeconds,
        minVoters: v,
        maxVoters: v,
      };
    }
    const d = defaults.questionDurationSeconds;
    return {
      questionDurationSeconds: d,
      epochDuration: d,
      maxDuration: d,
      minVoters: requiredVoters,
      maxVoters: Math.max(defaults.maxVoters, requiredVoters),
    };
  }
  if (preset) throw new AskFieldError(presetField, `cannot be combined with ${rcField}`);
  if (!isObj(rc)) throw new AskFieldError(rcField, 'must be an object');
  const durationKey = profile.ask.durationKeys.find((k) => given(rc[k]));
  const d = durationKey ? smallInt(rc[durationKey], `${rcField}.${durationKey}`, 1, 4294967295) : defaults.questionDurationSeconds;
  const minVoters = given(rc.minVoters) ? smallInt(rc.minVoters, `${rcField}.minVoters`, 1, 65535) : requiredVoters;
  const maxVoters = given(rc.maxVoters) ? smallInt(rc.maxVoters, `${rcField}.maxVoters`, 1, 65535) : defaults.maxVoters;
  if (minVoters !== requiredVoters) throw new AskFieldError(`${rcField}.minVoters`, `must equal bounty.requiredVoters (${requiredVoters})`);
  if (maxVoters < minVoters) throw new AskFieldError(`${rcField}.maxVoters`, `must be at least minVoters (${minVoters})`);
  return { questionDurationSeconds: d, epochDuration: d, maxDuration: d, minVoters, maxVoters };
}

function normalizeBounty(raw: unknown): NormalizedBounty {
  if (!isObj(raw))
    throw new AskFieldError(
      'bounty',
      `${raw === undefined ? 'is required' : `${JSON.stringify(raw)} is not an object`}: {"amount": "1500000", "asset": "USDC", "requiredVoters": "3"} pays 1.5 USDC to 3 raters (amounts in atomic units: 1 USDC = "1000000")${didYouMeanAmountObject(raw)}`,
    );
  const amount = decimalString(raw.amount, 'bounty.amount');
  if (amount < 1_000_000n)
    throw new AskFieldError(
      'bounty.amount',
      `must be at least 1000000 atomic units (1 USDC)${amount > 0n && amount < 1_000n ? `; "${amount}" is ${amount} millionths of a token: did you mean "${amount * 1_000_000n}"?` : ''}`,
    );
  const asset = assetOf(raw.asset, 'bounty.asset', 'USDC');
  const requiredVoters =
    raw.requiredVoters === undefined || raw.requiredVoters === null ? 3 : smallInt(raw.requiredVoters, 'bounty.requiredVoters', 3, 65535);
  const floor = amount >= 10_000_000_000n ? 8 : amount >= 1_000_000_000n ? 5 : 3;
  if (requiredVoters < floor)
    throw new AskFieldError('bounty.requiredVoters', `must be at least ${floor} for a bounty of ${amount} atomic units`);
  const e = raw.bountyEligibility ?? '0';
  const key = typeof e === 'string' ? e.trim().toLowerCase() : e;
  let bountyEligibility: 0 | 8;
  if ([0, '0', 'everyone', 'open'].includes(key as string | number)) bountyEligibility = 0;
  else if ([8, '8', 'proof_of_human', 'proof-of-human'].includes(key as string | number)) bountyEligibility = 8;
  else throw new AskFieldError('bounty.bountyEligibility', 'must be 0 (everyone) or 8 (proof_of_human)');
  return { asset, amount, requiredVoters, bountyEligibility };
}

function normalizeBonus(raw: unknown, bountyAsset: Asset, isBundle: boolean, profile: ServiceProfile): NormalizedBonus | null {
  if (raw === undefined || raw === null || raw === false) return null;
  if (!isObj(raw)) throw new AskFieldError('feedbackBonus', 'must be an object');
  if (isBundle) throw new AskFieldError('feedbackBonus', 'is for single-question asks only');
  const bonus: NormalizedBonus = {
    amount: decimalString(raw.amount, 'feedbackBonus.amount'),
    asset: assetOf(raw.asset, 'feedbackBonus.asset', bountyAsset),
  };
  if (bonus.amount === 0n) throw new AskFieldError('feedbackBonus.amount', 'must be greater than 0');
  const closes = profile.ask.obsoleteFields['feedbackBonus.feedbackClosesAt'];
  if (raw.feedbackClosesAt !== undefined)
    throw new AskFieldError('feedbackBonus.feedbackClosesAt', `is a seed-era field this service refuses; ${closes!.message}`, closes);
  if (given(raw.awarder) && trimmed(raw.awarder) !== '') {
    if (!ADDRESS.test(trimmed(raw.awarder))) throw new AskFieldError('feedbackBonus.awarder', 'must be an address');
    bonus.awarder = trimmed(raw.awarder) as `0x${string}`;
  }
  return bonus;
}

export function normalizeAsk(body: unknown, options: NormalizeOptions = {}): NormalizedAsk {
  const profile = options.profile ?? DEFAULT_PROFILE;
  if (!isObj(body)) throw new AskFieldError('(ask)', 'the ask must be a JSON object');
  // Every problem is collected, in the order the service would name them (the first leads: the sandbox answers with
  // it), so that one round of fixes is enough. A part that depends on another (the round on the bounty's voters, the
  // rules across the whole ask) is judged only when that part was sound.
  const problems: AskProblem[] = [];
  const attempt = <T>(part: () => T): T | undefined => {
    try {
      return part();
    } catch (error) {
      if (!(error instanceof AskFieldError)) throw error;
      problems.push(...error.problems);
      return undefined;
    }
  };
  const problem = (field: string, message: string) => problems.push({ field, message });

  for (const key of Object.keys(body)) {
    if (profile.ask.topLevelFields.has(key)) continue;
    const near = nearest(key, [...profile.ask.topLevelFields]);
    problem(key, `unknown top-level field "${key}"${near ? `; did you mean "${near}"?` : ''}`);
  }
  const hasQuestion = given(body.question);
  const hasQuestions = given(body.questions);
  if (hasQuestion === hasQuestions)
    problem(
      'question',
      hasQuestion
        ? 'give exactly one of question or questions'
        : 'is required (or questions, for a bundle): {"title": "…", "contextUrl": "https://…", "categoryId": "1", "tags": ["…"]}',
    );
  if (given(body.detailsUrl) || given(body.detailsHash)) {
    problem('detailsUrl', 'top-level detailsUrl/detailsHash cannot be combined with question(s); put them on the question');
  }
  const questionsOk = !hasQuestions || (Array.isArray(body.questions) && body.questions.length >= 1 && body.questions.length <= 10);
  if (!questionsOk) problem('questions', 'must be an array of 1 to 10 questions');
  const rawQuestions: unknown[] = hasQuestion ? [body.question] : questionsOk && hasQuestions ? (body.questions as unknown[]) : [];
  attempt(() => rejectObsolete(body, isObj(rawQuestions[0]) ? rawQuestions[0] : undefined, profile));

  const chainRaw = body.chainId;
  const chainId = typeof chainRaw === 'number' ? chainRaw : typeof chainRaw === 'string' && /^\d+$/.test(chainRaw) ? Number(chainRaw) : NaN;
  if (chainRaw === undefined)
    problem('chainId', 'is required: 8453 (Base), 84532 (Base Sepolia) or 31337 (the sandbox), the configured chain');
  else if (![8453, 84532, 31337].includes(chainId)) problem('chainId', `${JSON.stringify(chainRaw)} is not 8453, 84532 or 31337`);

  const clientRequestId = body.clientRequestId;
  if (typeof clientRequestId !== 'string' || !CLIENT_REQUEST_ID.test(clientRequestId.trim())) {
    problem(
      'clientRequestId',
      `${clientRequestId === undefined ? 'is required: ' : ''}must be 4-160 characters using letters, numbers, dot, dash, colon, or underscore (your idempotency label, e.g. "release-42-go-no-go")`,
    );
  }

  const bounty = attempt(() => normalizeBounty(body.bounty));
  const roundConfig = bounty && attempt(() => normalizeRoundConfig(body, rawQuestions, bounty.requiredVoters, profile));
  const questions = rawQuestions.map((q, i) =>
    attempt(() => normalizeQuestion(q, hasQuestion ? 'question' : `questions[${i}]`, body, options, profile)),
  );
  const isBundle = questions.length > 1;
  const sound = questions.filter((q): q is NormalizedQuestion => q !== undefined);
  if (isBundle && sound.some((q) => q.confidentiality.visibility === 'gated'))
    problem('questions', 'bundles cannot be gated (submit gated questions one at a time)');
  if (isBundle && sound.some((q) => q.templateId === 'head_to_head_ab')) problem('questions', 'bundles cannot use head_to_head_ab');

  const feedbackBonus = attempt(() => normalizeBonus(body.feedbackBonus, bounty?.asset ?? 'USDC', isBundle, profile));
  const maxPaymentAmount = attempt(() =>
    body.maxPaymentAmount === undefined ? null : decimalString(body.maxPaymentAmount, 'maxPaymentAmount'),
  );
  if (body.maxPaymentAmount === undefined && options.requireMaxPayment)
    problem(
      'maxPaymentAmount',
      'is required: the most this ask may spend, in atomic units (1 USDC = "1000000"), covering the bounty plus a feedback bonus in the same asset',
    );
  const payment = body.paymentMode ?? body.fundingMode;
  const paymentMode = attempt(() =>
    payment === undefined ? null : normalizePaymentMode(payment, body.paymentMode !== undefined ? 'paymentMode' : 'fundingMode'),
  );
  const walletRaw = body.walletAddress ?? body.agentWalletAddress;
  if (walletRaw !== undefined && (typeof walletRaw !== 'string' || !ADDRESS.test(walletRaw)))
    problem('walletAddress', 'must be a 0x-prefixed 20-byte address');

  // The shape (ask-schema.ts, the schema MCP clients read): what the rules above did not already name.
  const named = problems.map((p) => p.field);
  const covered = (field: string) => named.some((n) => field === n || field.startsWith(`${n}.`) || field.startsWith(`${n}[`));
  for (const p of shapeProblems(body, options.requireMaxPayment ? clientAskSchema : askSchema)) if (!covered(p.field)) problems.push(p);

  // The rules across the ask (the schema states what JSON Schema can): judged on the parts that were sound, and
  // reported with the rest, so that one answer names every problem.
  const rejections = profile.ask.rejections;
  const cross = (field: string, message: string, service?: ServiceRejection) =>
    covered(field) ? undefined : problems.push(service ? { field, message, service } : { field, message });
  if (bounty && feedbackBonus !== undefined && maxPaymentAmount !== undefined && maxPaymentAmount !== null) {
    const total = sameAssetTotal({ bounty, feedbackBonus });
    if (total > maxPaymentAmount)
      cross(
        'maxPaymentAmount',
        `${maxPaymentAmount} does not cover the ${bounty.asset} bounty plus any ${bounty.asset} feedback bonus (${total})`,
        rejections.maxPayment,
      );
  }
  if (paymentMode === 'x402_authorization') {
    if (isBundle)
      cross('paymentMode', 'x402_authorization supports single-question asks only; use wallet_calls for bundles', rejections.x402Bundle);
    else if (bounty && bounty.asset !== 'USDC')
      cross('paymentMode', 'LREP bounties require wallet_calls funding mode', rejections.x402Lrep);
    else if (feedbackBonus && feedbackBonus.asset !== 'USDC')
      cross('paymentMode', 'x402_authorization can only fund USDC bounties and USDC feedback bonuses');
  }
  if (problems.length > 0) throw AskFieldError.of(problems);

  const ask: NormalizedAsk = {
    profileId: profile.id,
    chainId,
    clientRequestId: (clientRequestId as string).trim(),
    bounty: bounty!,
    roundConfig: roundConfig!,
    questions: sound,
    isBundle,
    feedbackBonus: feedbackBonus ?? null,
    maxPaymentAmount: maxPaymentAmount ?? null,
    paymentMode: paymentMode ?? null,
    walletAddress: (walletRaw as `0x${string}` | undefined) ?? null,
    dryRun: isDryRun(body),
  };
  return ask;
}

export interface TranslatedAsk {
  /** The live-shaped body to send (the user's file when nothing needed translating). */
  body: Record<string, unknown>;
  translations: Translation[];
}

/**
 * A user's file, seed- or live-shaped, made into what the profile's service accepts (the spec README's rule 2):
 * exact equivalents translated, no-op fields dropped, the rest refused (AskFieldError, naming the field).
 * `now` (unix seconds) decides whether a bountyStartBy still lies ahead.
 */
export function translateAsk(body: unknown, now: number, profile: ServiceProfile = DEFAULT_PROFILE): TranslatedAsk {
  if (!isObj(body)) throw new AskFieldError('(ask)', 'the ask must be a JSON object');
  return profile.ask.translateSeed(body, now);
}

export function profileOf(ask: Pick<NormalizedAsk, 'profileId'>): ServiceProfile {
  return getProfile(ask.profileId);
}
