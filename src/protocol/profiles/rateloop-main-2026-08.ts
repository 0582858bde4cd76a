// The RateLoop service as its `main` branch runs it (read at commit 0b442ae, 2026-08; pinned by the live corpus in
// test/fixtures/vectors/live): JSON routes under /api/agent/*, LREP and USDC bounties, one-epoch rounds, gated
// questions blanked on chain, and the Base mainnet deployment. Every value here is a fact about that service version.
import { AskFieldError } from '../ask-errors.js';
import type { ServiceProfile, ServiceRejection, Translation } from './types.js';

const enc = (s: string) => encodeURIComponent(s).replace(/\./g, '%2E');

const obsolete = (stage: ServiceRejection['stage'], message: string): ServiceRejection => ({
  stage,
  code: 'invalid_arguments',
  originalCode: stage === 'parse' ? 'X402QuestionInputError' : 'McpToolError',
  message,
});
const ROUND_CONFIG_OBSOLETE = obsolete(
  'parse',
  'question.roundConfig.epochDuration and question.roundConfig.maxDuration are no longer accepted; use questionDurationSeconds.',
);

const EPOCH_KEYS = ['epochDuration', 'blindPhaseSeconds', 'blindSeconds'];
const MAX_KEYS = ['maxDuration', 'maxDurationSeconds', 'deadlineSeconds'];
const DURATION_KEYS = ['questionDurationSeconds', 'questionDuration', 'durationSeconds', 'duration'];
const DEFAULT_DURATION = 1200;
const PRESETS = { pure_agent_fast: { questionDurationSeconds: 60, voters: 3 } };
const PRESET_ALIASES: Record<string, string | null> = {
  pure_agent_fast: 'pure_agent_fast',
  agent_fast: 'pure_agent_fast',
  default: null,
  standard: null,
  '': null,
};
/** A reservation lives 30 minutes: a bountyStartBy later than that is met by any submission of this ask. */
const RESERVATION_SECONDS = 1800;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function wholeSeconds(value: unknown, field: string): number {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n)) throw new AskFieldError(field, 'must be a whole number of seconds (a decimal string)');
  return n;
}

function firstKey(o: Obj, keys: string[]): string | undefined {
  return keys.find((k) => o[k] !== undefined && o[k] !== null);
}

/** The preset a body names (top level first, then the single question), or undefined. */
function presetDuration(body: Obj, question: Obj | undefined): number | undefined {
  const raw = body.roundPreset ?? question?.roundPreset;
  if (typeof raw !== 'string') return undefined;
  const id =
    PRESET_ALIASES[
      raw
        .trim()
        .replace(/[-\s]+/g, '_')
        .toLowerCase()
    ];
  return id ? PRESETS[id as keyof typeof PRESETS].questionDurationSeconds : undefined;
}

/**
 * chain.md §6.12, the spec README's rule 2: a seed-shaped file is accepted, but only what this service accepts is
 * sent. Its rounds are one epoch, its bounty starts when the question is created and pays on that one round, and
 * its bounty and feedback windows are the question duration.
 */
function translateSeed(input: Obj, now: number): { body: Obj; translations: Translation[] } {
  const body = structuredClone(input);
  const translations: Translation[] = [];
  const question = isObj(body.question) ? body.question : undefined;

  // roundConfig.epochDuration / maxDuration (top level or on the single question) → questionDurationSeconds.
  for (const [where, holder] of [
    ['roundConfig', body],
    ['question.roundConfig', question],
  ] as const) {
    const rc = holder?.roundConfig;
    if (!isObj(rc)) continue;
    const epochKey = firstKey(rc, EPOCH_KEYS);
    const maxKey = firstKey(rc, MAX_KEYS);
    if (!epochKey && !maxKey) continue;
    const epoch = epochKey ? wholeSeconds(rc[epochKey], `${where}.${epochKey}`) : undefined;
    const max = maxKey ? wholeSeconds(rc[maxKey], `${where}.${maxKey}`) : undefined;
    if (epoch !== undefined && max !== undefined && epoch !== max) {
      throw new AskFieldError(
        `${where}.${maxKey}`,
        `the service runs one-epoch rounds, so ${epochKey} (${epoch}) must equal ${maxKey} (${max}); set ${where}.questionDurationSeconds to the round length instead`,
      );
    }
    const duration = (epoch ?? max)!;
    if (duration < 1 || duration > 4294967295)
      throw new AskFieldError(`${where}.${epochKey ?? maxKey}`, 'must be from 1 to 4294967295 seconds');
    const durationKey = firstKey(rc, DURATION_KEYS);
    if (durationKey && wholeSeconds(rc[durationKey], `${where}.${durationKey}`) !== duration) {
      throw new AskFieldError(
        `${where}.${durationKey}`,
        `differs from ${where}.${epochKey ?? maxKey} (${duration}); give the round length once, as questionDurationSeconds`,
      );
    }
    for (const k of [...EPOCH_KEYS, ...MAX_KEYS, ...DURATION_KEYS]) delete rc[k];
    rc.questionDurationSeconds = String(duration);
    translations.push({
      field: `${where}.${[epochKey, maxKey].filter(Boolean).join('/')}`,
      action: 'translated',
      note: `one-epoch round of ${duration} s → ${where}.questionDurationSeconds`,
    });
  }

  // The question duration the service will use: explicit, else a preset's, else its default.
  const rc = isObj(body.roundConfig) ? body.roundConfig : isObj(question?.roundConfig) ? question.roundConfig : undefined;
  const durationKey = rc ? firstKey(rc, DURATION_KEYS) : undefined;
  const duration =
    rc && durationKey
      ? wholeSeconds(rc[durationKey], `roundConfig.${durationKey}`)
      : rc
        ? DEFAULT_DURATION
        : (presetDuration(body, question) ?? DEFAULT_DURATION);

  const bounty = isObj(body.bounty) ? body.bounty : undefined;
  if (bounty) {
    if (bounty.requiredSettledRounds !== undefined) {
      const n = wholeSeconds(bounty.requiredSettledRounds, 'bounty.requiredSettledRounds');
      if (n !== 1)
        throw new AskFieldError(
          'bounty.requiredSettledRounds',
          `the service pays the bounty on one creation-anchored round; ${n} settled rounds cannot be honoured (remove the field)`,
        );
      delete bounty.requiredSettledRounds;
      translations.push({
        field: 'bounty.requiredSettledRounds',
        action: 'dropped',
        note: 'one settled round is what the service pays on',
      });
    }
    if (bounty.bountyStartBy !== undefined) {
      const by = wholeSeconds(bounty.bountyStartBy, 'bounty.bountyStartBy');
      if (by !== 0 && by < now + RESERVATION_SECONDS) {
        throw new AskFieldError(
          'bounty.bountyStartBy',
          `${by} is ${by <= now ? 'already past' : 'less than 30 minutes away'}; the service starts the bounty when the question is created, so only 0 or a deadline at least 30 minutes ahead can be honoured`,
        );
      }
      delete bounty.bountyStartBy;
      translations.push({
        field: 'bounty.bountyStartBy',
        action: 'dropped',
        note: 'the service starts the bounty when the question is created',
      });
    }
    for (const key of ['bountyWindowSeconds', 'feedbackWindowSeconds']) {
      if (bounty[key] === undefined) continue;
      const window = wholeSeconds(bounty[key], `bounty.${key}`);
      if (window !== duration) {
        throw new AskFieldError(
          `bounty.${key}`,
          `the service's ${key === 'bountyWindowSeconds' ? 'bounty' : 'feedback'} window is the question duration (${duration} s), not ${window} s; set roundConfig.questionDurationSeconds to ${window} or remove the field`,
        );
      }
      delete bounty[key];
      translations.push({ field: `bounty.${key}`, action: 'dropped', note: `equals the question duration (${duration} s)` });
    }
  }
  if (isObj(body.feedbackBonus) && body.feedbackBonus.feedbackClosesAt !== undefined) {
    throw new AskFieldError(
      'feedbackBonus.feedbackClosesAt',
      `the service closes the feedback bonus with the question (${duration} s after it is created) and takes no close time; remove the field (the bonus's close time is reported after the question is confirmed)`,
    );
  }
  return { body, translations };
}

export const rateloopMain202608: ServiceProfile = {
  id: 'rateloop-main-2026-08',
  summary: 'RateLoop main (Aug 2026): /api/agent/* routes, USDC and LREP bounties, one-epoch rounds, Base mainnet',
  basis: 'github.com/Noc2/RateLoop main 0b442ae7e1346107b72babf9a3a562de66c00e69 (live corpus test/fixtures/vectors/live)',
  routes: {
    templates: '/api/agent/templates',
    quote: '/api/agent/quote',
    asks: '/api/agent/asks',
    ask: (k) => `/api/agent/asks/${enc(k)}`,
    confirm: (k) => `/api/agent/asks/${enc(k)}/confirm`,
    confirmBonus: (k) => `/api/agent/asks/${enc(k)}/confirm-feedback-bonus`,
    askByClient: '/api/agent/asks/by-client-request',
    result: (k) => `/api/agent/results/${enc(k)}`,
    resultByClient: '/api/agent/results/by-client-request',
    resultByContent: (id) => `/api/agent/results/by-content/${enc(id)}`,
    handoffs: '/api/agent/handoffs',
    signingIntents: '/api/agent/signing-intents',
    publicMcp: '/api/mcp/public',
  },
  ask: {
    topLevelFields: new Set(
      'clientRequestId questions question roundConfig roundPreset bounty templateId templateInputs templateVersion confidentiality chainId maxPaymentAmount paymentMode fundingMode feedbackBonus walletAddress agentWalletAddress detailsHash detailsUrl mode webhookUrl webhookSecret webhookEvents webhookChallengeId webhookSignature paymentAuthorization dryRun executionMode sandbox signatureMode transport'.split(
        ' ',
      ),
    ),
    obsoleteFields: {
      'bounty.requiredSettledRounds': obsolete(
        'parse',
        'bounty.requiredSettledRounds is no longer accepted; reward eligibility uses one creation-anchored round.',
      ),
      'bounty.bountyStartBy': obsolete(
        'parse',
        'bounty.bountyStartBy is no longer accepted; bounty timing starts when the question is created.',
      ),
      'bounty.bountyWindowSeconds': obsolete(
        'parse',
        'bounty.bountyWindowSeconds is no longer accepted; use question.roundConfig.questionDurationSeconds.',
      ),
      'bounty.feedbackWindowSeconds': obsolete(
        'parse',
        'bounty.feedbackWindowSeconds is no longer accepted; use question.roundConfig.questionDurationSeconds.',
      ),
      'roundConfig.epochDuration': ROUND_CONFIG_OBSOLETE,
      'roundConfig.maxDuration': ROUND_CONFIG_OBSOLETE,
      'feedbackBonus.feedbackClosesAt': obsolete(
        'request',
        'feedbackBonus.feedbackClosesAt is no longer accepted; Feedback Bonus timing uses the question duration.',
      ),
    },
    rejections: {
      gatedExternalMedia: (q) => ({
        ...obsolete(
          'parse',
          `${q}.confidentiality.visibility gated requires a RateLoop-hosted detailsUrl; external contextUrl and videoUrl are not allowed.`,
        ),
        code: 'invalid_media',
      }),
      unknownAudienceField: (path) => obsolete('parse', `${path}: is not a supported targetAudience field.`),
      x402Bundle: {
        stage: 'request',
        status: 409,
        code: 'duplicate_ask',
        originalCode: 'X402QuestionConflictError',
        message: 'EIP-3009 USDC authorization currently supports single-question asks only.',
        recoverWith: 'reuse_original_request_or_change_clientRequestId',
      },
      x402Lrep: { ...obsolete('request', 'LREP bounties require wallet_calls funding mode.'), originalCode: 'X402QuestionInputError' },
      maxPayment: {
        stage: 'request',
        code: 'max_payment_exceeded',
        originalCode: 'McpToolError',
        message: 'Quoted payment exceeds maxPaymentAmount.',
        recoverWith: 'increase_maxPaymentAmount_or_requote',
      },
      // packages/node-utils/src/submissionValidation.ts, packages/agents/src/headToHeadTitle.ts; the route names a
      // message that mentions a template unsupported_template (lib/mcp/tools.ts classifyToolError).
      prohibitedTitle: obsolete('parse', 'Your question contains prohibited content'),
      prohibitedTags: obsolete('parse', 'Tags contain prohibited content.'),
      headToHeadInputs: (q) => ({
        ...obsolete(
          'parse',
          `${q}.templateInputs must include valid optionAKey, optionALabel, optionBKey, and optionBLabel for head_to_head_ab.`,
        ),
        code: 'unsupported_template',
        recoverWith: 'call_rateloop_list_result_templates',
      }),
      headToHeadTitle: (message) => obsolete('parse', message),
    },
    questionText: {
      // packages/node-utils/src/contentModeration.ts blockedTextTerms
      blockedTerms: ['porn', 'pornography', 'xxx', 'nsfw', 'hentai', 'rule34', 'onlyfans'],
      // packages/node-utils/src/voteUi.ts, packages/agents/src/headToHeadTitle.ts
      headToHead: { templateId: 'head_to_head_ab', maxLabelLength: 32, maxTitleLength: 120 },
    },
    obsoleteRoundKeys: [...EPOCH_KEYS, ...MAX_KEYS],
    durationKeys: DURATION_KEYS,
    roundDefaults: { questionDurationSeconds: DEFAULT_DURATION, maxVoters: 100, minRequiredVoters: 3 },
    roundPresets: PRESETS,
    presetAliases: PRESET_ALIASES,
    gated: { blankOnChain: ['contextUrl', 'detailsUrl', 'imageUrls', 'videoUrl'], defaultBond: { amount: '0', asset: 'LREP' } },
    maxTitleLength: 120,
    targetAudience: {
      fields: ['ageGroups', 'countries', 'expertise', 'languages', 'nationalities', 'roles', 'ai', 'team', 'hybrid'],
      countryFields: ['countries', 'nationalities', 'team.countries'],
      nested: {
        ai: ['agentFrameworks', 'autonomy', 'expertise', 'languages', 'modelProviders'],
        team: ['countries', 'expertise', 'languages', 'sizes', 'types'],
        hybrid: ['expertise', 'languages', 'modelProviders', 'oversight'],
      },
    },
    translateSeed,
  },
  hashes: {
    questionSchemaVersion: 'rateloop.question.v4',
    defaultMetadataBase: 'https://rateloop.ai',
    operationKeyPrefix: 'rateloop:x402-question:',
    saltPrefix: 'rateloop:agent-wallet-question-salt:',
    tags: {
      context: 'rateloop-question-context-v5',
      reveal: 'rateloop-question-reveal-v9',
      bundleItem: 'rateloop-question-bundle-item-v5',
      bundle: 'rateloop-question-bundle-v5',
      bundleReveal: 'rateloop-question-bundle-reveal-v7',
      x402: 'rateloop-x402-question-payment-v4',
      x402OneShot: 'rateloop-x402-question-one-shot-payment-v7',
    },
    resultSpec: {
      ratingSystem: 'rateloop.robust_bts_binary.v1',
      schemaVersion: 'rateloop.result_spec.v1',
      confidenceInputs: [
        'revealedCount',
        'totalStake',
        'predictedUpDistribution',
        'upPool',
        'downPool',
        'ratingBps',
        'conservativeRatingBps',
        'confidenceMass',
        'effectiveEvidence',
      ],
      predictionScale: { display: '0-100% up', maxBps: 10000, minBps: 0, unit: 'predicted share of up votes' },
    },
  },
  knownFailures: [
    {
      // Its bundle builder leaves out the details tuple the bundle ABI requires (corpus: every wallet-calls bundle).
      route: 'asks',
      status: 500,
      code: 'failed_submission',
      applies: (body) => Array.isArray(body.questions) && body.questions.length > 1,
      explain: 'a known fault of this service version with multi-question (bundle) asks',
      hint: 'ask the questions one at a time (one ask file per question), or try again once the service is fixed',
    },
  ],
  deployments: {
    8453: {
      source: 'profile rateloop-main-2026-08 (Base mainnet deployment, block 48195709; chain.md §2.1)',
      contracts: {
        contentRegistry: '0x1b0219e42e4C72A3eeBad1ef8578444c3523bcB3',
        roundVotingEngine: '0x07b4f7d652a5672211Bb4A2157E726eAF7C5295B',
        advisoryVoteRecorder: '0x41bD202963b1A14173124A5dbCc9867fE18ad62d',
        x402QuestionSubmitter: '0xfA8249aef34655867D9f29AbE3CD6d298B5EE17E',
        questionRewardPoolEscrow: '0x88D82500425b6BD4f1CA68416D4Bc8835F028F31',
        feedbackBonusEscrow: '0xa73F52Fb7C08Ef078dB339597EF49b9A8853CB4F',
        protocolConfig: '0x1efeE315eEC0E7D80D6cD616CEe933e2980C6D02',
        frontendRegistry: '0x270403196E9b47B8eB9950e8F943aaa65DD9983C',
      },
      lrep: '0x43EdE79E10ab0388190C85E0b63eE2DD15fEb03a',
    },
    84532: {
      unavailable: 'the service has no published deployment of its paid-round contracts on Base Sepolia (84532)',
    },
  },
};
