// A service profile: everything that belongs to one version of the service rather than to loopsign — its routes,
// the ask fields it accepts or rejects (and how a seed-shaped file is translated for it), the layout of the hashes
// it derives, and the trust anchors of its deployments per chain. Adding the next service version means adding one
// profile file next to the existing one and listing it in ./index.ts.
import type { Address, ChainContracts } from '../../chains/table.js';

export interface ServiceRoutes {
  templates: string;
  quote: string;
  asks: string;
  ask(operationKey: string): string;
  confirm(operationKey: string): string;
  confirmBonus(operationKey: string): string;
  askByClient: string;
  result(operationKey: string): string;
  resultByClient: string;
  resultByContent(contentId: string): string;
  handoffs: string;
  signingIntents: string;
  publicMcp: string;
}

/** The service's contracts on one chain: the only addresses the guards accept for the paid round. */
export interface ProfileDeployment {
  contracts: ChainContracts;
  lrep?: Address;
  /** Where the addresses come from (shown by `config show`). */
  source: string;
}

/** A chain where the profile knows there is no trusted deployment, and what the user would have to configure. */
export interface ProfileNoDeployment {
  unavailable: string;
}

/** What the service answers when it meets a field (the exact error envelope's code and message). */
export interface ServiceRejection {
  stage: 'parse' | 'request';
  code: string;
  originalCode: string;
  message: string;
  /** HTTP status (default 400) and recoverWith (default by code) of the envelope. */
  status?: number;
  recoverWith?: string;
}

/** One change a translation made to the user's file before anything is sent. */
export interface Translation {
  field: string;
  action: 'translated' | 'dropped';
  note: string;
}

export interface AskRules {
  /** Top-level fields the service accepts (anything else is refused). */
  topLevelFields: ReadonlySet<string>;
  /** Seed-era fields the service refuses, keyed by path, with its exact answer. */
  obsoleteFields: Record<string, ServiceRejection>;
  /** The service's own answers to input-only rules loopsign also applies locally (`servicePath` is its field path, questions[i]…). */
  rejections: {
    gatedExternalMedia(servicePath: string): ServiceRejection;
    unknownAudienceField(servicePath: string): ServiceRejection;
    x402Bundle: ServiceRejection;
    x402Lrep: ServiceRejection;
    maxPayment: ServiceRejection;
    /** A title or a tag holding a blocked term. */
    prohibitedTitle: ServiceRejection;
    prohibitedTags: ServiceRejection;
    /** head_to_head_ab without two valid options (keys, labels). */
    headToHeadInputs(servicePath: string): ServiceRejection;
    /** A head_to_head_ab title the service refuses, with its exact message. */
    headToHeadTitle(message: string): ServiceRejection;
  };
  /**
   * The service's rules for question text (its content moderation terms, matched case-insensitively anywhere in a
   * title or a tag) and for head-to-head questions (two options A and B; a title that names both as `A = …` and
   * `B = …`, asks which is preferred, and would fit when built from the labels).
   */
  questionText: {
    blockedTerms: readonly string[];
    headToHead: { templateId: string; maxLabelLength: number; maxTitleLength: number };
  };
  /** roundConfig keys that count as the obsolete epochDuration / maxDuration. */
  obsoleteRoundKeys: readonly string[];
  /** roundConfig keys that name the question duration. */
  durationKeys: readonly string[];
  roundDefaults: { questionDurationSeconds: number; maxVoters: number; minRequiredVoters: number };
  /** Named presets: duration, and a voter floor (min = max = max(floor, requiredVoters)). */
  roundPresets: Record<string, { questionDurationSeconds: number; voters: number }>;
  presetAliases: Record<string, string | null>;
  /** Gated questions: fields the on-chain call and the submission key carry empty, and the bond recorded when none is given. */
  gated: {
    blankOnChain: readonly ('contextUrl' | 'detailsUrl' | 'imageUrls' | 'videoUrl')[];
    defaultBond: { amount: string; asset: 'USDC' | 'LREP' };
  };
  maxTitleLength: number;
  /** targetAudience: accepted fields in the order the service records them; which hold country codes; nested groups. */
  targetAudience: { fields: readonly string[]; countryFields: readonly string[]; nested: Record<string, readonly string[]> };
  /**
   * Accept a seed-shaped ask in the user's file: translate or drop what has an exact equivalent, refuse (AskFieldError)
   * the rest. Returns the body to send (the input is not changed) and what was done.
   */
  translateSeed(body: Record<string, unknown>, now: number): { body: Record<string, unknown>; translations: Translation[] };
}

export interface HashLayout {
  questionSchemaVersion: string;
  defaultMetadataBase: string;
  operationKeyPrefix: string;
  saltPrefix: string;
  tags: { context: string; reveal: string; bundleItem: string; bundle: string; bundleReveal: string; x402: string; x402OneShot: string };
  resultSpec: {
    ratingSystem: string;
    schemaVersion: string;
    confidenceInputs: readonly string[];
    predictionScale: Record<string, string | number>;
  };
}

/** A failure of this service version that loopsign recognises, to say what it means instead of echoing it. */
export interface KnownFailure {
  /** The route's key in ServiceRoutes. */
  route: keyof ServiceRoutes;
  status: number;
  code: string;
  /** Whether the request that drew it is the kind the fault hits. */
  applies(body: Record<string, unknown>): boolean;
  explain: string;
  hint: string;
}

export interface ServiceProfile {
  id: string;
  summary: string;
  /** The service source the profile was read from (repository commit), for reports. */
  basis: string;
  routes: ServiceRoutes;
  ask: AskRules;
  hashes: HashLayout;
  knownFailures: readonly KnownFailure[];
  /** Trust anchors per chain id. 31337 (the sandbox) takes its addresses from the running sandbox's manifest. */
  deployments: Record<number, ProfileDeployment | ProfileNoDeployment>;
}
