// Validation and normalisation of an ask body (interface.md "Ask"; service-api.md §5.1; chain.md §6.1, §7).
// Shared by the client (local validation before any network call, then hash recomputation) and the sandbox
// (which plays the service). Accepts both the seed shape and the live shape; the caller's body is never changed.

export class AskFieldError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

export type Asset = 'USDC' | 'LREP';
export const ASSET_ENUM: Record<Asset, number> = { LREP: 0, USDC: 1 };

export interface NormalizedBounty {
  asset: Asset;
  amount: bigint;
  requiredVoters: number;
  bountyEligibility: 0 | 8;
}

export interface NormalizedRoundConfig {
  /** The on-chain tuple. Live asks: epochDuration = maxDuration = questionDurationSeconds. */
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

export interface NormalizedQuestion {
  title: string;
  contextUrl: string;
  imageUrls: string[];
  videoUrl: string;
  tags: string[];
  categoryId: bigint;
  detailsUrl: string;
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
  feedbackClosesAt?: string;
}

export type PaymentMode = 'wallet_calls' | 'x402_authorization';

export interface NormalizedAsk {
  shape: 'live' | 'seed';
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
const IMAGE_FORMATS = /\.(png|jpe?g|gif|webp|svg|bmp|avif)$/i;

export const SEED_FIELDS = [
  'bounty.requiredSettledRounds',
  'bounty.bountyStartBy',
  'bounty.bountyWindowSeconds',
  'bounty.feedbackWindowSeconds',
  'roundConfig.epochDuration',
  'roundConfig.maxDuration',
  'feedbackBonus.feedbackClosesAt',
] as const;

const LIVE_TOP_LEVEL = new Set(
  'clientRequestId questions question roundConfig roundPreset bounty templateId templateInputs templateVersion confidentiality chainId maxPaymentAmount paymentMode fundingMode feedbackBonus walletAddress agentWalletAddress detailsHash detailsUrl mode webhookUrl webhookSecret webhookEvents webhookChallengeId webhookSignature paymentAuthorization dryRun executionMode sandbox signatureMode transport'.split(
    ' ',
  ),
);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function get(o: unknown, key: string): unknown {
  return isObj(o) ? o[key] : undefined;
}

/** Decimal string of atomic units (the interface: all numeric quantities are decimal strings). */
export function decimalString(value: unknown, field: string, opts: { allowNumber?: boolean } = {}): bigint {
  if (typeof value === 'number' && opts.allowNumber && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  if (typeof value !== 'string') throw new AskFieldError(field, `must be a decimal string of atomic units, e.g. "2500000"`);
  if (!/^(0|[1-9][0-9]*)$/.test(value)) throw new AskFieldError(field, `"${value}" is not a non-negative integer decimal string`);
  return BigInt(value);
}

function smallInt(value: unknown, field: string, min: number, max: number): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^[0-9]+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new AskFieldError(field, `must be an integer from ${min} to ${max}`);
  return n;
}

function asset(value: unknown, field: string, fallback: Asset): Asset {
  if (value === undefined || value === null) return fallback;
  if (value === 'USDC' || value === 'LREP') return value;
  throw new AskFieldError(field, `must be "USDC" or "LREP"`);
}

export function isYouTube(url: URL): boolean {
  return ['youtube.com', 'www.youtube.com', 'm.youtube.com', 'youtu.be', 'www.youtu.be'].includes(url.hostname);
}

function youTubeId(url: URL): string | undefined {
  if (url.hostname.endsWith('youtu.be')) return url.pathname.slice(1) || undefined;
  if (url.pathname === '/watch') return url.searchParams.get('v') ?? undefined;
  const m = /^\/(?:shorts|embed|live)\/([^/]+)/.exec(url.pathname);
  return m?.[1];
}

function parseHttps(value: unknown, field: string): URL {
  if (typeof value !== 'string' || value.trim() === '') throw new AskFieldError(field, 'must be an https URL');
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new AskFieldError(field, `"${value}" is not a URL`);
  }
  if (url.protocol !== 'https:') throw new AskFieldError(field, 'must use https');
  return url;
}

export function normalizeContextUrl(value: unknown, field = 'question.contextUrl'): string {
  const url = parseHttps(value, field);
  if (isYouTube(url)) {
    const id = youTubeId(url);
    if (!id || !/^[A-Za-z0-9_-]{6,20}$/.test(id)) throw new AskFieldError(field, 'is a YouTube link without a video id');
    return `https://www.youtube.com/watch?v=${id}`;
  }
  if (IMAGE_FORMATS.test(url.pathname)) throw new AskFieldError(field, 'must be a page, not a direct image file (use question.imageUrls)');
  const host = url.host.replace(/^www\./, '');
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  return `https://${host}${path}${url.search}`;
}

export function normalizeVideoUrl(value: unknown, field = 'question.videoUrl'): string {
  const url = parseHttps(value, field);
  if (!isYouTube(url)) throw new AskFieldError(field, 'must be a YouTube URL');
  return normalizeContextUrl(value, field);
}

const IMAGE_PATH = /^\/api\/attachments\/images\/att_[A-Za-z0-9_-]{16,80}\.webp$/;

/**
 * Image URLs: a service attachment URL, optionally ending in #sha256=0x<64 hex> (hex lowercased). When the
 * service origin is known, the URL must be on it. http is allowed only for a loopback origin (the sandbox).
 */
export function normalizeImageUrl(value: unknown, field: string, serviceOrigin?: string): string {
  if (typeof value !== 'string') throw new AskFieldError(field, 'must be a URL string');
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new AskFieldError(field, `"${value}" is not a URL`);
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) throw new AskFieldError(field, 'must use https');
  if (serviceOrigin !== undefined && url.origin !== new URL(serviceOrigin).origin) {
    throw new AskFieldError(field, `must be an image uploaded to the service (${new URL(serviceOrigin).origin}/api/attachments/images/...); upload it with \`loopsign upload-image\``);
  }
  if (!IMAGE_PATH.test(url.pathname) || url.search) {
    throw new AskFieldError(field, 'must be a service attachment URL …/api/attachments/images/att_<id>.webp (see `loopsign upload-image`)');
  }
  let fragment = '';
  if (url.hash) {
    const m = /^#sha256=0x([0-9a-fA-F]{64})$/.exec(url.hash);
    if (!m) throw new AskFieldError(field, 'the fragment must be #sha256=0x<64 hex>');
    fragment = `#sha256=0x${m[1]!.toLowerCase()}`;
  }
  return `${url.origin}${url.pathname}${fragment}`;
}

function normalizeTags(value: unknown, field: string): string[] {
  const list = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : undefined;
  if (!list) throw new AskFieldError(field, 'must be an array of 1-3 strings (or a comma-separated string)');
  const tags = list.map((t, i) => {
    if (typeof t !== 'string' || t.trim() === '') throw new AskFieldError(`${field}[${i}]`, 'must be a non-empty string');
    if (t.includes(',')) throw new AskFieldError(`${field}[${i}]`, 'must not contain a comma');
    return t.trim();
  });
  if (tags.length < 1 || tags.length > 3) throw new AskFieldError(field, `must have 1 to 3 tags, not ${tags.length}`);
  return tags;
}

function normalizeConfidentiality(value: unknown, field: string): Confidentiality {
  if (value === undefined || value === null) return { visibility: 'public', disclosurePolicy: null, bond: null };
  if (!isObj(value)) throw new AskFieldError(field, 'must be an object');
  const visibility = value.visibility ?? 'public';
  if (visibility === 'public') return { visibility: 'public', disclosurePolicy: null, bond: null };
  if (visibility !== 'gated') throw new AskFieldError(`${field}.visibility`, 'must be "public" or "gated"');
  let policy = value.disclosurePolicy ?? 'private_forever';
  if (policy === 'private_until_settlement') policy = 'after_settlement';
  if (policy !== 'private_forever' && policy !== 'after_settlement') {
    throw new AskFieldError(`${field}.disclosurePolicy`, 'must be "private_forever" or "after_settlement"');
  }
  let bond: Confidentiality['bond'] = null;
  if (value.bond !== undefined && value.bond !== null) {
    if (!isObj(value.bond)) throw new AskFieldError(`${field}.bond`, 'must be {amount, asset}');
    const amount = decimalString(value.bond.amount, `${field}.bond.amount`);
    if (amount !== 0n && (amount < 1_000_000n || amount > 2n ** 64n - 1n)) throw new AskFieldError(`${field}.bond.amount`, 'must be 0 or between 1000000 and 2^64-1');
    bond = { amount: amount.toString(), asset: asset(value.bond.asset, `${field}.bond.asset`, 'LREP') };
  }
  return { visibility: 'gated', disclosurePolicy: policy, bond };
}

function objectOrNull(value: unknown, field: string): Record<string, unknown> | null {
  if (value === undefined || value === null) return null;
  if (!isObj(value)) throw new AskFieldError(field, 'must be an object');
  return value;
}

export interface NormalizeOptions {
  /** Service origin for image URL checks (the sandbox knows its own; the client knows its base URL). */
  serviceOrigin?: string;
  /** Template ids the service offers, with their required inputs. */
  templates?: { id: string; requiredInputs: string[] }[];
  /** Service-hosted details URLs required for gated questions (…/api/attachments/details/det_…). */
  requireHostedGatedDetails?: boolean;
}

function normalizeQuestion(q: unknown, field: string, top: Obj, options: NormalizeOptions): NormalizedQuestion {
  if (!isObj(q)) throw new AskFieldError(field, 'must be an object');
  const title = q.title;
  if (typeof title !== 'string' || title.trim() === '') throw new AskFieldError(`${field}.title`, 'is required');
  const confidentiality = normalizeConfidentiality(q.confidentiality ?? top.confidentiality, `${field}.confidentiality`);
  const gated = confidentiality.visibility === 'gated';
  if (gated && q.contextUrl !== undefined && q.contextUrl !== '') throw new AskFieldError(`${field}.contextUrl`, 'must be omitted when confidentiality is gated');
  if (gated && q.videoUrl !== undefined && q.videoUrl !== '') throw new AskFieldError(`${field}.videoUrl`, 'must be omitted when confidentiality is gated');

  const contextUrl = q.contextUrl === undefined || q.contextUrl === '' ? '' : normalizeContextUrl(q.contextUrl, `${field}.contextUrl`);
  const videoUrl = q.videoUrl === undefined || q.videoUrl === '' ? '' : normalizeVideoUrl(q.videoUrl, `${field}.videoUrl`);
  let imageUrls: string[] = [];
  if (q.imageUrls !== undefined) {
    if (!Array.isArray(q.imageUrls)) throw new AskFieldError(`${field}.imageUrls`, 'must be an array of URLs');
    if (q.imageUrls.length > 4) throw new AskFieldError(`${field}.imageUrls`, 'may hold at most 4 images');
    imageUrls = [...new Set(q.imageUrls.map((u, i) => normalizeImageUrl(u, `${field}.imageUrls[${i}]`, options.serviceOrigin)))].sort();
  }
  if (videoUrl && imageUrls.length > 0) throw new AskFieldError(`${field}.videoUrl`, 'cannot be combined with imageUrls');

  const hasDetailsUrl = q.detailsUrl !== undefined && q.detailsUrl !== '';
  const hasDetailsHash = q.detailsHash !== undefined && q.detailsHash !== '';
  if (hasDetailsUrl !== hasDetailsHash) throw new AskFieldError(`${field}.${hasDetailsUrl ? 'detailsHash' : 'detailsUrl'}`, 'detailsUrl and detailsHash go together');
  let detailsUrl = '';
  let detailsHash: `0x${string}` = ZERO_HASH;
  if (hasDetailsUrl) {
    detailsUrl = parseHttpsOrLoopback(q.detailsUrl, `${field}.detailsUrl`);
    if (typeof q.detailsHash !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(q.detailsHash)) {
      throw new AskFieldError(`${field}.detailsHash`, 'must be 0x followed by 64 hex characters (the SHA-256 of the details text)');
    }
    detailsHash = q.detailsHash.toLowerCase() as `0x${string}`;
  }
  if (gated && options.requireHostedGatedDetails && !/\/api\/attachments\/details\/det_[A-Za-z0-9_-]{16,80}$/.test(detailsUrl)) {
    throw new AskFieldError(`${field}.detailsUrl`, 'gated questions need a service-hosted detailsUrl (…/api/attachments/details/det_…)');
  }
  if (!contextUrl && imageUrls.length === 0 && !videoUrl && !(gated && detailsUrl)) {
    throw new AskFieldError(field, 'needs at least one of contextUrl, imageUrls or videoUrl');
  }

  const categoryRaw = q.categoryId ?? '1';
  const categoryId = decimalString(typeof categoryRaw === 'number' ? String(categoryRaw) : categoryRaw, `${field}.categoryId`);
  if (categoryId === 0n) throw new AskFieldError(`${field}.categoryId`, 'must be a positive integer');

  const templateId = (q.templateId ?? top.templateId ?? 'generic_rating') as unknown;
  if (typeof templateId !== 'string') throw new AskFieldError(`${field}.templateId`, 'must be a string');
  const templateVersion = (q.templateVersion ?? top.templateVersion ?? 1) as unknown;
  if (templateVersion !== 1) throw new AskFieldError(`${field}.templateVersion`, 'must be 1');
  const templateInputs = objectOrNull(q.templateInputs ?? top.templateInputs, `${field}.templateInputs`);
  if (templateInputs) {
    for (const [k, v] of Object.entries(templateInputs)) {
      if (typeof v !== 'string') throw new AskFieldError(`${field}.templateInputs.${k}`, 'must be a string');
    }
  }
  if (options.templates) {
    const template = options.templates.find((t) => t.id === templateId);
    if (!template) throw new AskFieldError(`${field}.templateId`, `unknown template "${templateId}" (see \`loopsign templates\`)`);
    for (const input of template.requiredInputs) {
      if (typeof templateInputs?.[input] !== 'string' || (templateInputs[input] as string).trim() === '') {
        throw new AskFieldError(`${field}.templateInputs.${input}`, `is required by the ${templateId} template`);
      }
    }
  }
  return {
    title: title,
    contextUrl,
    imageUrls,
    videoUrl,
    tags: normalizeTags(q.tags, `${field}.tags`),
    categoryId,
    detailsUrl,
    detailsHash,
    confidentiality,
    templateId,
    templateVersion: 1,
    templateInputs,
    targetAudience: objectOrNull(q.targetAudience, `${field}.targetAudience`),
  };
}

function parseHttpsOrLoopback(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new AskFieldError(field, 'must be a URL');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new AskFieldError(field, `"${value}" is not a URL`);
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) throw new AskFieldError(field, 'must use https');
  return value;
}

export function normalizePaymentMode(value: unknown, field = 'paymentMode'): PaymentMode {
  if (value === 'wallet_calls' || value === 'agent_wallet') return 'wallet_calls';
  if (['x402_authorization', 'eip3009_usdc_authorization', 'eip3009_authorization', 'native_x402', 'x402'].includes(value as string)) return 'x402_authorization';
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

export function normalizeAsk(body: unknown, options: NormalizeOptions = {}): NormalizedAsk {
  if (!isObj(body)) throw new AskFieldError('(ask)', 'the ask must be a JSON object');
  const bountyRaw = body.bounty;
  if (!isObj(bountyRaw)) throw new AskFieldError('bounty', 'is required: {amount, asset, requiredVoters}');
  const roundRaw = body.roundConfig;
  if (roundRaw !== undefined && !isObj(roundRaw)) throw new AskFieldError('roundConfig', 'must be an object');
  const bonusRaw = body.feedbackBonus;
  if (bonusRaw !== undefined && bonusRaw !== null && !isObj(bonusRaw)) throw new AskFieldError('feedbackBonus', 'must be an object');

  const shape: 'live' | 'seed' = SEED_FIELDS.some((path) => {
    const [a, b] = path.split('.') as [string, string];
    return get(body[a], b) !== undefined;
  })
    ? 'seed'
    : 'live';

  for (const key of Object.keys(body)) {
    if (shape === 'live' && !LIVE_TOP_LEVEL.has(key)) throw new AskFieldError(key, `unknown top-level field "${key}"`);
  }

  const chainRaw = body.chainId;
  if (chainRaw === undefined) throw new AskFieldError('chainId', 'is required (8453, 84532, or 31337 for the sandbox)');
  const chainId = typeof chainRaw === 'number' ? chainRaw : typeof chainRaw === 'string' && /^\d+$/.test(chainRaw) ? Number(chainRaw) : NaN;
  if (![8453, 84532, 31337].includes(chainId)) throw new AskFieldError('chainId', `${JSON.stringify(chainRaw)} is not 8453, 84532 or 31337`);

  const clientRequestId = body.clientRequestId;
  if (typeof clientRequestId !== 'string' || !CLIENT_REQUEST_ID.test(clientRequestId)) {
    throw new AskFieldError('clientRequestId', 'must be 4-160 characters using letters, numbers, dot, dash, colon, or underscore');
  }

  // Bounty.
  const amount = decimalString(bountyRaw.amount, 'bounty.amount');
  if (amount < 1_000_000n) throw new AskFieldError('bounty.amount', 'must be at least 1000000 atomic units (1 USDC)');
  const bountyAsset = asset(bountyRaw.asset, 'bounty.asset', 'USDC');
  const requiredVoters = bountyRaw.requiredVoters === undefined ? 3 : smallInt(bountyRaw.requiredVoters, 'bounty.requiredVoters', 3, 65535);
  const floor = amount >= 10_000_000_000n ? 8 : amount >= 1_000_000_000n ? 5 : 3;
  if (requiredVoters < floor) throw new AskFieldError('bounty.requiredVoters', `must be at least ${floor} for a bounty of ${amount} atomic units`);
  const eligibilityRaw = bountyRaw.bountyEligibility ?? '0';
  let bountyEligibility: 0 | 8;
  if ([0, '0', 'everyone', 'open'].includes(eligibilityRaw as string | number)) bountyEligibility = 0;
  else if ([8, '8', 'proof_of_human', 'proof-of-human'].includes(eligibilityRaw as string | number)) bountyEligibility = 8;
  else throw new AskFieldError('bounty.bountyEligibility', 'must be 0 (everyone) or 8 (proof_of_human)');
  const bounty: NormalizedBounty = { asset: bountyAsset, amount, requiredVoters, bountyEligibility };
  if (shape === 'seed') {
    for (const f of ['requiredSettledRounds', 'bountyStartBy', 'bountyWindowSeconds', 'feedbackWindowSeconds']) {
      if (bountyRaw[f] !== undefined) decimalString(bountyRaw[f], `bounty.${f}`);
    }
  }

  // Round configuration.
  let roundConfig: NormalizedRoundConfig;
  const preset = body.roundPreset;
  if (preset !== undefined) {
    if (roundRaw !== undefined) throw new AskFieldError('roundPreset', 'cannot be combined with roundConfig');
    const p = String(preset).toLowerCase().replace(/[-\s]/g, '_');
    if (p === 'pure_agent_fast' || p === 'agent_fast') {
      const v = Math.max(3, requiredVoters);
      roundConfig = { questionDurationSeconds: 60, epochDuration: 60, maxDuration: 60, minVoters: v, maxVoters: v };
    } else if (p === 'default' || p === 'standard') {
      roundConfig = { questionDurationSeconds: 1200, epochDuration: 1200, maxDuration: 1200, minVoters: requiredVoters, maxVoters: Math.max(100, requiredVoters) };
    } else throw new AskFieldError('roundPreset', `unknown preset "${String(preset)}"`);
  } else {
    const r = (roundRaw ?? {}) as Obj;
    const minVoters = r.minVoters === undefined ? requiredVoters : smallInt(r.minVoters, 'roundConfig.minVoters', 1, 65535);
    if (minVoters !== requiredVoters) throw new AskFieldError('roundConfig.minVoters', `must equal bounty.requiredVoters (${requiredVoters})`);
    const maxVoters = r.maxVoters === undefined ? Math.max(100, requiredVoters) : Math.max(smallInt(r.maxVoters, 'roundConfig.maxVoters', 1, 65535), requiredVoters);
    if (shape === 'seed' && (r.epochDuration !== undefined || r.maxDuration !== undefined)) {
      const epochDuration = smallInt(r.epochDuration ?? r.maxDuration, 'roundConfig.epochDuration', 1, 4294967295);
      const maxDuration = smallInt(r.maxDuration ?? r.epochDuration, 'roundConfig.maxDuration', 1, 4294967295);
      if (maxDuration < epochDuration) throw new AskFieldError('roundConfig.maxDuration', 'must be at least epochDuration');
      roundConfig = { questionDurationSeconds: maxDuration, epochDuration, maxDuration, minVoters, maxVoters };
    } else {
      const durRaw = r.questionDurationSeconds ?? r.questionDuration ?? r.durationSeconds ?? r.duration;
      const d = durRaw === undefined ? 1200 : smallInt(durRaw, 'roundConfig.questionDurationSeconds', 1, 4294967295);
      roundConfig = { questionDurationSeconds: d, epochDuration: d, maxDuration: d, minVoters, maxVoters };
    }
  }

  // Questions.
  const hasQuestion = body.question !== undefined;
  const hasQuestions = body.questions !== undefined;
  if (hasQuestion === hasQuestions) throw new AskFieldError('question', 'give exactly one of question or questions');
  if ((body.detailsUrl !== undefined || body.detailsHash !== undefined) && (hasQuestion || hasQuestions)) {
    throw new AskFieldError('detailsUrl', 'top-level detailsUrl/detailsHash cannot be combined with question(s); put them on the question');
  }
  let questions: NormalizedQuestion[];
  if (hasQuestion) questions = [normalizeQuestion(body.question, 'question', body, options)];
  else {
    if (!Array.isArray(body.questions) || body.questions.length < 1 || body.questions.length > 10) {
      throw new AskFieldError('questions', 'must be an array of 1 to 10 questions');
    }
    questions = body.questions.map((q, i) => normalizeQuestion(q, `questions[${i}]`, body, options));
  }
  const isBundle = questions.length > 1;
  if (isBundle && questions.some((q) => q.confidentiality.visibility === 'gated')) throw new AskFieldError('questions', 'bundles cannot be gated');
  if (isBundle && questions.some((q) => q.templateId === 'head_to_head_ab')) throw new AskFieldError('questions', 'bundles cannot use head_to_head_ab');

  // Feedback bonus.
  let feedbackBonus: NormalizedBonus | null = null;
  if (isObj(bonusRaw)) {
    if (isBundle) throw new AskFieldError('feedbackBonus', 'is for single-question asks only');
    const bonusAmount = decimalString(bonusRaw.amount, 'feedbackBonus.amount');
    if (bonusAmount === 0n) throw new AskFieldError('feedbackBonus.amount', 'must be greater than 0');
    feedbackBonus = { amount: bonusAmount, asset: asset(bonusRaw.asset, 'feedbackBonus.asset', bountyAsset) };
    if (bonusRaw.awarder !== undefined) {
      if (typeof bonusRaw.awarder !== 'string' || !ADDRESS.test(bonusRaw.awarder)) throw new AskFieldError('feedbackBonus.awarder', 'must be an address');
      feedbackBonus.awarder = bonusRaw.awarder as `0x${string}`;
    }
    if (bonusRaw.feedbackClosesAt !== undefined) feedbackBonus.feedbackClosesAt = decimalString(bonusRaw.feedbackClosesAt, 'feedbackBonus.feedbackClosesAt').toString();
  }

  const maxPaymentAmount = body.maxPaymentAmount === undefined ? null : decimalString(body.maxPaymentAmount, 'maxPaymentAmount');
  const payment = body.paymentMode ?? body.fundingMode;
  const paymentMode = payment === undefined ? null : normalizePaymentMode(payment, body.paymentMode !== undefined ? 'paymentMode' : 'fundingMode');
  const walletRaw = body.walletAddress ?? body.agentWalletAddress;
  if (walletRaw !== undefined && (typeof walletRaw !== 'string' || !ADDRESS.test(walletRaw))) throw new AskFieldError('walletAddress', 'must be a 0x-prefixed 20-byte address');

  const ask: NormalizedAsk = {
    shape,
    chainId,
    clientRequestId,
    bounty,
    roundConfig,
    questions,
    isBundle,
    feedbackBonus,
    maxPaymentAmount,
    paymentMode,
    walletAddress: (walletRaw as `0x${string}` | undefined) ?? null,
    dryRun: isDryRun(body),
  };
  if (maxPaymentAmount !== null && sameAssetTotal(ask) > maxPaymentAmount) {
    throw new AskFieldError('maxPaymentAmount', `${maxPaymentAmount} does not cover the ${bountyAsset} bounty plus any ${bountyAsset} feedback bonus (${sameAssetTotal(ask)})`);
  }
  const mode = paymentMode ?? defaultPaymentMode(ask);
  if (mode === 'x402_authorization') {
    if (isBundle) throw new AskFieldError('paymentMode', 'x402_authorization supports single-question asks only; use wallet_calls for bundles');
    if (bountyAsset !== 'USDC') throw new AskFieldError('paymentMode', 'LREP bounties require wallet_calls funding mode');
    if (feedbackBonus && feedbackBonus.asset !== 'USDC') throw new AskFieldError('paymentMode', 'x402_authorization can only fund USDC bounties and USDC feedback bonuses');
  }
  return ask;
}
