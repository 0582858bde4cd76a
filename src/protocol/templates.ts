// Result templates (service-api.md §5.2) and the result-spec hash (chain.md §6.3). The client takes each
// template's resultSpecHash from GET /api/agent/templates and recomputes it from the template's own fields.
// The generic_rating vote semantics are the live ones (they reproduce the vector hash); the others are the
// sandbox's own wording, which is fine because every hash is recomputed from whatever the template says.
import { keccak256, toBytes } from 'viem';
import { canonicalJson } from './canonical.js';

export interface VoteSemantics {
  up: string;
  down: string;
}

export interface TemplateDefinition {
  id: string;
  version: 1;
  title: string;
  description: string;
  voteSemantics: VoteSemantics;
  submissionPattern: 'single_question' | 'bundle_member';
  bundleStrategy: 'independent' | 'rank_by_rating';
  requiredInputs: string[];
}

const t = (
  id: string,
  title: string,
  up: string,
  down: string,
  requiredInputs: string[] = [],
  submissionPattern: TemplateDefinition['submissionPattern'] = 'single_question',
  bundleStrategy: TemplateDefinition['bundleStrategy'] = 'independent',
): TemplateDefinition => ({
  id,
  version: 1,
  title,
  description: `${title}.`,
  voteSemantics: { up, down },
  submissionPattern,
  bundleStrategy,
  requiredInputs,
});

export const TEMPLATES: TemplateDefinition[] = [
  t('generic_rating', 'Generic rating', 'positive signal for the submitted question', 'negative signal for the submitted question'),
  t('go_no_go', 'Go / no-go decision', 'go: proceed as proposed', 'no-go: do not proceed as proposed'),
  t('ranked_option_member', 'Ranked option (bundle member)', 'this option should rank higher', 'this option should rank lower', [], 'bundle_member', 'rank_by_rating'),
  t('llm_answer_quality', 'LLM answer quality', 'the answer is correct and useful', 'the answer is wrong, unsafe or unhelpful'),
  t('rag_grounding_check', 'RAG grounding check', 'the answer is supported by the cited source', 'the answer is not supported by the cited source'),
  t('claim_verification', 'Claim verification', 'the claim is true', 'the claim is false or misleading'),
  t('source_credibility_check', 'Source credibility check', 'the source is credible', 'the source is not credible'),
  t('agent_action_go_no_go', 'Agent action go / no-go', 'the agent should take the action', 'the agent should not take the action'),
  t('feature_acceptance_test', 'Feature acceptance test', 'the feature meets the acceptance criteria', 'the feature does not meet the acceptance criteria', [
    'acceptanceCriteria',
    'expectedBehavior',
    'releaseStage',
    'testSteps',
  ]),
  t('agent_trace_review', 'Agent trace review', 'the agent trace is acceptable', 'the agent trace shows a problem'),
  t('proposal_review', 'Proposal review', 'support the proposal', 'oppose the proposal'),
  t('pairwise_output_preference', 'Pairwise output preference', 'prefer this output', 'do not prefer this output', [], 'bundle_member', 'rank_by_rating'),
  t('head_to_head_ab', 'Head-to-head A/B', 'option A is better', 'option B is better', ['optionAKey', 'optionALabel', 'optionBKey', 'optionBLabel']),
];

export function findTemplate(id: string): TemplateDefinition | undefined {
  return TEMPLATES.find((x) => x.id === id);
}

export const RESULT_SPEC_CONFIDENCE_INPUTS = [
  'revealedCount',
  'totalStake',
  'predictedUpDistribution',
  'upPool',
  'downPool',
  'ratingBps',
  'conservativeRatingBps',
  'confidenceMass',
  'effectiveEvidence',
];

export function resultSpecOf(templateId: string, templateVersion: number, voteSemantics: VoteSemantics): Record<string, unknown> {
  return {
    confidenceInputs: RESULT_SPEC_CONFIDENCE_INPUTS,
    predictionScale: { display: '0-100% up', maxBps: 10000, minBps: 0, unit: 'predicted share of up votes' },
    ratingSystem: 'rateloop.robust_bts_binary.v1',
    schemaVersion: 'rateloop.result_spec.v1',
    templateId,
    templateVersion,
    voteSemantics: { down: voteSemantics.down, up: voteSemantics.up },
  };
}

export function resultSpecHash(templateId: string, templateVersion: number, voteSemantics: VoteSemantics): `0x${string}` {
  return keccak256(toBytes(canonicalJson(resultSpecOf(templateId, templateVersion, voteSemantics))));
}
