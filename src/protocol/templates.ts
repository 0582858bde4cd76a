// Result templates (service-api.md §5.2) and the result-spec hash (chain.md §6.3). The client takes each template's
// resultSpecHash from GET /api/agent/templates and recomputes it from the template's own fields. The table is the
// live service's (ids, titles, vote semantics, decision thresholds, required inputs: test/fixtures/vectors/live/
// templates.json), so the sandbox offers exactly what the service offers and hashes exactly as it does.
import { keccak256, toBytes } from 'viem';
import { canonicalJson } from './canonical.js';
import { DEFAULT_PROFILE, type ServiceProfile } from './profiles/index.js';

export interface VoteSemantics {
  up: string;
  down: string;
}

export interface TemplateDefinition {
  id: string;
  version: 1;
  title: string;
  voteSemantics: VoteSemantics;
  /** proceedRatingBps, proceedConservativeRatingBps, cautionRatingBps, reviseRatingBps. */
  interpretation: [number, number, number, number];
  submissionPattern: 'single_question' | 'bundle_member';
  bundleStrategy: 'independent' | 'rank_by_rating';
  /** Inputs the service requires (templateInputsSchema.required). */
  requiredInputs: string[];
  /** Inputs the template describes. */
  inputs: string[];
}

const t = (
  id: string,
  title: string,
  up: string,
  down: string,
  interpretation: TemplateDefinition['interpretation'],
  inputs: string[],
  opts: { bundle?: boolean; required?: string[] } = {},
): TemplateDefinition => ({
  id,
  version: 1,
  title,
  voteSemantics: { up, down },
  interpretation,
  submissionPattern: opts.bundle ? 'bundle_member' : 'single_question',
  bundleStrategy: opts.bundle ? 'rank_by_rating' : 'independent',
  requiredInputs: opts.required ?? [],
  inputs,
});

export const TEMPLATES: TemplateDefinition[] = [
  t(
    'generic_rating',
    'Generic Rating',
    'positive signal for the submitted question',
    'negative signal for the submitted question',
    [6500, 5500, 5500, 4000],
    ['audience', 'goal', 'successSignal'],
  ),
  t(
    'go_no_go',
    'Go / No-Go',
    'proceed with the proposed action',
    'do not proceed without changes',
    [7000, 6000, 5600, 4500],
    ['action', 'blockCondition', 'riskLevel'],
  ),
  t(
    'ranked_option_member',
    'Ranked Option Member',
    'this option is preferred or acceptable',
    'this option is less preferred or unacceptable',
    [6500, 5500, 5200, 4000],
    ['comparisonSetId', 'optionId', 'optionLabel', 'ratingCriterion', 'sharedPrompt'],
    { bundle: true },
  ),
  t(
    'llm_answer_quality',
    'AI Answer Quality',
    'the answer is useful, correct enough, and appropriate to show',
    'the answer is incorrect, incomplete, misleading, or inappropriate',
    [7000, 6000, 5500, 4500],
    ['audience', 'outputId', 'promptSummary', 'rubric'],
  ),
  t(
    'rag_grounding_check',
    'Source Support Check',
    'the answer is well supported by the linked sources',
    'the answer is unsupported, overstates the evidence, or contradicts the sources',
    [7500, 6500, 5600, 4500],
    ['answerId', 'claimScope', 'sourceSetId', 'unsupportedClaimPolicy'],
  ),
  t(
    'claim_verification',
    'Claim Verification',
    'the claim is materially supported by the evidence',
    'the claim is unsupported, false, outdated, or missing important context',
    [7000, 6000, 5500, 4500],
    ['claim', 'evidenceStandard', 'intendedUse'],
  ),
  t(
    'source_credibility_check',
    'Source Credibility Check',
    'the source looks credible, current, and relevant enough to use',
    'the source looks unreliable, stale, irrelevant, or unsafe to rely on',
    [6500, 5600, 5200, 4000],
    ['domain', 'intendedUse', 'recencyRequirement', 'sourceType'],
  ),
  t(
    'agent_action_go_no_go',
    'Agent Action Go / No-Go',
    'the agent should proceed with the proposed action',
    'the agent should stop, revise, or escalate before acting',
    [7200, 6200, 5600, 4500],
    ['action', 'blastRadius', 'blockCondition', 'fallbackAction'],
  ),
  t(
    'feature_acceptance_test',
    'Feature Acceptance Test',
    'the feature works as described and is ready enough for the stated audience or environment',
    'the feature fails, is confusing, incomplete, or should not ship without changes',
    [7500, 6500, 6000, 5000],
    [
      'acceptanceCriteria',
      'buildId',
      'environmentHints',
      'expectedBehavior',
      'featureId',
      'featureName',
      'knownLimitations',
      'outOfScope',
      'releaseStage',
      'testSteps',
    ],
  ),
  t(
    'agent_trace_review',
    'Agent Trace Review',
    'the agent trajectory is appropriate, efficient, and safe enough for the stated goal',
    'the agent used wrong, missing, unsafe, irrelevant, or insufficient steps and should be revised or escalated',
    [7200, 6200, 5600, 4500],
    [
      'allowedTools',
      'disallowedActions',
      'escalationPolicy',
      'expectedOutcome',
      'requiredSteps',
      'reviewFocus',
      'sourceSystem',
      'taskGoal',
      'traceId',
    ],
  ),
  t(
    'proposal_review',
    'Proposal Review',
    'the proposal is clear, actionable, and reasonable to advance',
    'the proposal is unclear, risky, incomplete, or not ready to advance',
    [6500, 5600, 5200, 4000],
    ['decisionStage', 'proposalId', 'riskFocus', 'successCriteria'],
  ),
  t(
    'pairwise_output_preference',
    'Pairwise Output Preference',
    'this candidate output is preferred or acceptable for the stated criterion',
    'this candidate output is not preferred or fails the stated criterion',
    [6500, 5500, 5200, 4000],
    ['candidateId', 'candidateLabel', 'comparisonSetId', 'preferenceCriterion', 'promptSummary'],
    { bundle: true },
  ),
  t(
    'head_to_head_ab',
    'Head-to-Head A/B',
    'option A is preferred for the stated comparison',
    'option B is preferred for the stated comparison',
    [6500, 5500, 5200, 4000],
    ['optionAKey', 'optionALabel', 'optionBKey', 'optionBLabel'],
    { required: ['optionAKey', 'optionALabel', 'optionBKey', 'optionBLabel'] },
  ),
];

export function findTemplate(id: string): TemplateDefinition | undefined {
  return TEMPLATES.find((x) => x.id === id);
}

export function resultSpecOf(
  templateId: string,
  templateVersion: number,
  voteSemantics: VoteSemantics,
  profile: ServiceProfile = DEFAULT_PROFILE,
): Record<string, unknown> {
  const r = profile.hashes.resultSpec;
  return {
    confidenceInputs: r.confidenceInputs,
    predictionScale: r.predictionScale,
    ratingSystem: r.ratingSystem,
    schemaVersion: r.schemaVersion,
    templateId,
    templateVersion,
    voteSemantics: { down: voteSemantics.down, up: voteSemantics.up },
  };
}

export function resultSpecHash(
  templateId: string,
  templateVersion: number,
  voteSemantics: VoteSemantics,
  profile: ServiceProfile = DEFAULT_PROFILE,
): `0x${string}` {
  return keccak256(toBytes(canonicalJson(resultSpecOf(templateId, templateVersion, voteSemantics, profile))));
}
