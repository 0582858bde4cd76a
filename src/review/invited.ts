// The invited-review client over the workspace MCP (review.md §5.5, §10): the bound policy, evaluate, request,
// open reviews and assurance state. Every answer is read from `structuredContent` and checked against what was
// asked and what the bound policy says — another opportunity, workspace, integration or request profile is refused
// (exit 5) — before anything from it is printed as a next step.
import { createHash } from 'node:crypto';
import { RefusedError, ServiceError, UsageError } from '../errors.js';
import { canonicalJson } from '../protocol/canonical.js';
import { arrayField, integerField, isDoc, objectField, type ServiceDoc } from '../service/doc.js';
import type { ToolArgs } from '../service/mcp.js';
import { mediaTypeOption, readPayload } from './artifacts.js';
import { parseEnvelope, type Envelope } from './envelope.js';
import { isId, serviceId, userId } from './ids.js';
import { sha256Text, type OpportunityRecord, type ReviewQuestion, type ReviewRecords } from './records.js';
import type { WorkspaceMcp } from './workspace-mcp.js';
import { jsonProblem } from '../json-problem.js';

export const CONTEXT_SCHEMA = 'rateloop.agent-context.v2';
export const DECISION_SCHEMA = 'rateloop.review-decision.v1';
export const STATE_SCHEMA = 'rateloop.assurance-state.v1';
export const OPEN_REVIEWS_SCHEMA = 'rateloop.open-human-reviews.v1';
const IDENT = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,159}$/;
const REFERENCE = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,239}$/;
const RISK_TIER = /^[a-z][a-z0-9_-]{0,63}$/;
/** The reviewer prompt the service builds: 163 characters of framing + the question + both payloads as JSON strings ≤ 4,000. */
export const PROMPT_BUDGET = 3837;

export interface AgentContext {
  /** rateloop_get_agent_context's structuredContent as it came (printed under `service`). */
  doc: ServiceDoc;
  workspaceId: string;
  integrationId: string;
  agentId: string;
  audiencePolicyHash: string;
  allowedWorkflowKeys: string[];
  humanReviewStatus: string;
  authority: string | null;
  profile: {
    id: string;
    version: number;
    hash: string;
    questionAuthority: string;
    criterion: string;
    audienceType: string;
    resultSemantics: string;
  } | null;
}

export function parseAgentContext(doc: ServiceDoc): AgentContext {
  if (doc.schemaVersion !== CONTEXT_SCHEMA)
    throw new ServiceError(
      'invalid_response',
      `the agent context has schemaVersion ${JSON.stringify(doc.schemaVersion)}, not ${CONTEXT_SCHEMA}`,
    );
  const hash = objectField(doc, 'reviewPolicy')?.audiencePolicyHash;
  if (!isId('sha256', hash)) throw new ServiceError('invalid_response', 'the agent context has no reviewPolicy.audiencePolicyHash');
  const { integrationId, agentId } = doc;
  if (!isId('configured', integrationId) || !isId('configured', agentId))
    throw new ServiceError('invalid_response', 'the agent context has no integrationId or agentId');
  const hr = objectField(doc, 'humanReview') ?? {};
  const rp = objectField(hr, 'requestProfile');
  const version = integerField(rp, 'version');
  const profile =
    rp && typeof rp.profileId === 'string' && version !== undefined && isId('sha256', rp.hash)
      ? {
          id: rp.profileId,
          version,
          hash: rp.hash,
          questionAuthority: String(rp.questionAuthority),
          criterion: String(rp.criterion ?? ''),
          audienceType: String(objectField(rp, 'audience')?.type),
          resultSemantics: String(rp.resultSemantics),
        }
      : null;
  return {
    doc,
    workspaceId: serviceId('workspace', doc.workspaceId, 'the workspaceId of the agent context'),
    integrationId,
    agentId,
    audiencePolicyHash: hash,
    allowedWorkflowKeys: (arrayField(doc, 'allowedWorkflowKeys') ?? []).filter((k): k is string => typeof k === 'string'),
    humanReviewStatus: String(hr.status),
    authority: typeof hr.authority === 'string' ? hr.authority : null,
    profile,
  };
}

export async function agentContext(mcp: WorkspaceMcp): Promise<AgentContext> {
  return parseAgentContext(await mcp.tool('rateloop_get_agent_context', {}));
}

/** The raw evaluate decision (the HTTP twin's answer, and `rawResult` of the evaluate envelope). */
export function parseReviewDecision(doc: ServiceDoc): {
  opportunityId: string;
  decision: string;
  state: string;
  suggestionCommitment: string;
  scopeId: string;
} {
  if (doc.schemaVersion !== DECISION_SCHEMA)
    throw new ServiceError(
      'invalid_response',
      `the review decision has schemaVersion ${JSON.stringify(doc.schemaVersion)}, not ${DECISION_SCHEMA}`,
    );
  const decision = (['required', 'recommended', 'skip'] as const).find((d) => d === doc.decision);
  if (decision === undefined)
    throw new ServiceError('invalid_response', `the review decision ${JSON.stringify(doc.decision)} is not required, recommended or skip`);
  const { suggestionCommitment } = doc;
  const state = objectField(doc, 'lifecycle')?.state;
  if (!isId('sha256', suggestionCommitment) || typeof state !== 'string')
    throw new ServiceError('invalid_response', 'the review decision has no suggestionCommitment or lifecycle');
  return {
    opportunityId: serviceId('opportunity', doc.opportunityId, 'an opportunityId'),
    decision,
    state,
    suggestionCommitment,
    scopeId: serviceId('scope', doc.scopeId, 'a scopeId'),
  };
}

export function parseAssuranceState(doc: ServiceDoc, scopeId?: string): { scopeId: string; stage: string; reviewRateBps: number } {
  if (doc.schemaVersion !== STATE_SCHEMA)
    throw new ServiceError(
      'invalid_response',
      `the assurance state has schemaVersion ${JSON.stringify(doc.schemaVersion)}, not ${STATE_SCHEMA}`,
    );
  const id = serviceId('scope', doc.scopeId, 'a scopeId');
  if (scopeId !== undefined && id !== scopeId)
    throw new RefusedError('other_scope', `asked for scope ${scopeId}, the service answered about ${id}: refused`);
  const reviewRateBps = integerField(doc, 'reviewRateBps');
  if (reviewRateBps === undefined) throw new ServiceError('invalid_response', 'the assurance state has no reviewRateBps');
  return { scopeId: id, stage: String(doc.stage), reviewRateBps };
}

/** The opportunity id the service derives (§1.2): `aop_` + 40 hex of SHA-256(workspace \0 agent \0 external id). */
export function expectedOpportunityId(workspaceId: string, agentId: string, externalOpportunityId: string): string {
  return `aop_${createHash('sha256').update(`${workspaceId}\0${agentId}\0${externalOpportunityId}`).digest('hex').slice(0, 40)}`;
}

export interface EvaluateInput {
  externalId?: string;
  workflow?: string;
  riskTier?: string;
  source?: string;
  suggestion?: string;
  sourceReference?: string;
  sourceType?: string;
  suggestionType?: string;
  confidenceBps?: string;
  criticalRisk?: boolean;
  metadataIncomplete?: boolean;
  execution?: string;
  model?: string;
  question?: string;
  positiveLabel?: string;
  negativeLabel?: string;
}

const EXECUTION_KEYS = [
  'externalExecutionId',
  'status',
  'startedAt',
  'completedAt',
  'toolCallCount',
  'toolDurationMs',
  'primarySpanId',
  'generationSpans',
];
const SPAN_KEYS = [
  'spanId',
  'parentSpanId',
  'role',
  'provider',
  'requestedModel',
  'resolvedModel',
  'modelVersion',
  'reasoningEffort',
  'serviceTier',
  'startedAt',
  'completedAt',
  'timeToFirstOutputMs',
  'inputTokens',
  'cachedInputTokens',
  'outputTokens',
  'reasoningOutputTokens',
  'responseIdHash',
  'finishReason',
];

/** The execution provenance (§5.5.4): from a JSON file, checked for the rules the service enforces, or one span from --model. */
async function execution(o: EvaluateInput, externalId: string): Promise<ServiceDoc> {
  if ((o.execution === undefined) === (o.model === undefined))
    throw new UsageError('usage', 'give the execution provenance once: --execution FILE (JSON) or --model PROVIDER/MODEL');
  if (o.model !== undefined) {
    const m = /^([^/\s]{1,120})\/(\S{1,200})$/.exec(o.model);
    if (!m) throw new UsageError('invalid_model', '--model must be PROVIDER/MODEL, e.g. openai/gpt-5.1');
    return {
      externalExecutionId: `exec:${externalId}`.slice(0, 160),
      status: 'completed',
      startedAt: null,
      completedAt: null,
      toolCallCount: null,
      toolDurationMs: null,
      primarySpanId: 'primary',
      generationSpans: [{ spanId: 'primary', parentSpanId: null, role: 'primary', provider: m[1], requestedModel: m[2] }],
    };
  }
  const { promises: fs } = await import('node:fs');
  let doc: unknown;
  let text: string;
  try {
    text = await fs.readFile(o.execution!, 'utf8');
  } catch (error) {
    throw new UsageError(
      'invalid_execution',
      `--execution ${o.execution} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new UsageError('invalid_execution', `--execution ${o.execution} is ${jsonProblem(error, text)}`);
  }
  const fail = (why: string) => new UsageError('invalid_execution', `--execution ${o.execution}: ${why}`);
  if (!isDoc(doc)) throw fail('not a JSON object');
  const unknown = Object.keys(doc).filter((k) => !EXECUTION_KEYS.includes(k));
  if (unknown.length) throw fail(`unknown member ${unknown[0]} (the service takes only ${EXECUTION_KEYS.join(', ')})`);
  if (typeof doc.externalExecutionId !== 'string' || !doc.externalExecutionId.trim() || doc.externalExecutionId.length > 160)
    throw fail('externalExecutionId must be 1 … 160 characters');
  if (doc.status !== 'completed' && doc.status !== 'failed') throw fail('status must be completed or failed');
  const spans = doc.generationSpans;
  if (!Array.isArray(spans) || spans.length < 1 || spans.length > 64) throw fail('generationSpans must hold 1 … 64 spans');
  for (const s of spans) {
    if (!isDoc(s)) throw fail('every span must be a JSON object');
    const extra = Object.keys(s).filter((k) => !SPAN_KEYS.includes(k));
    if (extra.length) throw fail(`span member ${extra[0]} is not one the service takes`);
  }
  const primary = spans.filter((s) => isDoc(s) && s.role === 'primary');
  if (primary.length !== 1 || !isDoc(primary[0]) || primary[0].spanId !== doc.primarySpanId)
    throw fail('exactly one span must have role primary and the spanId of primarySpanId');
  return doc;
}

export interface Evaluation {
  envelope: Envelope;
  context: AgentContext;
  /** This external id had been evaluated from this machine before (the identical inputs were sent again). */
  repeated: boolean;
}

function refuseBinding(what: string, expected: unknown, actual: unknown): RefusedError {
  return new RefusedError(
    'binding_mismatch',
    `the service's answer names ${what} ${JSON.stringify(actual)}, but the bound policy is ${JSON.stringify(expected)}: refused`,
    { details: { field: what, expected, actual } },
  );
}

/** The answer must be about the opportunity, workspace, integration and request profile this credential is bound to. */
export function checkBinding(env: Envelope, context: AgentContext): void {
  if (env.workspaceId !== context.workspaceId) throw refuseBinding('workspace', context.workspaceId, env.workspaceId);
  if (env.integrationId !== context.integrationId) throw refuseBinding('integration', context.integrationId, env.integrationId);
  const p = context.profile;
  if (p && (env.requestProfile.id !== p.id || env.requestProfile.version !== p.version || env.requestProfile.hash !== p.hash)) {
    throw refuseBinding(
      'request profile',
      `${p.id}@${p.version} ${p.hash}`,
      `${env.requestProfile.id}@${env.requestProfile.version} ${env.requestProfile.hash}`,
    );
  }
}

export async function evaluate(mcp: WorkspaceMcp, records: ReviewRecords, input: EvaluateInput): Promise<Evaluation> {
  const externalId = input.externalId ?? '';
  if (!IDENT.test(externalId))
    throw new UsageError(
      'invalid_external_id',
      '--external-id must be 1 … 160 of letters, digits and ._:- (starting with a letter or digit): one stable id per output',
    );
  if (!IDENT.test(input.workflow ?? ''))
    throw new UsageError('invalid_workflow', '--workflow must be a workflow key (letters, digits and ._:-)');
  if (!RISK_TIER.test(input.riskTier ?? ''))
    throw new UsageError('invalid_risk_tier', '--risk-tier must match [a-z][a-z0-9_-]{0,63}, e.g. high');
  const reference = input.sourceReference ?? `loopsign:${externalId}`;
  if (!REFERENCE.test(reference))
    throw new UsageError(
      'invalid_source_reference',
      '--source-reference must be an opaque reference (letters, digits and ._:/-, ≤ 240), never source text',
    );
  let confidence: number | null = null;
  if (input.confidenceBps !== undefined) {
    confidence = Number(input.confidenceBps);
    if (!/^[0-9]+$/.test(input.confidenceBps) || confidence > 10_000)
      throw new UsageError('invalid_confidence', '--confidence-bps must be a whole number 0 … 10000');
  }
  const sourcePayload = await readPayload(input.source ?? '', '--source');
  const suggestionPayload = await readPayload(input.suggestion ?? '', '--suggestion');
  const sourceContentType = input.sourceType ? mediaTypeOption(input.sourceType, '--source-type') : 'text/plain';
  const suggestionContentType = input.suggestionType ? mediaTypeOption(input.suggestionType, '--suggestion-type') : 'text/plain';
  const question = questionOf(input);
  const exec = await execution(input, externalId);
  const inputs = {
    externalId,
    workflow: input.workflow,
    riskTier: input.riskTier,
    reference,
    confidence,
    critical: input.criticalRisk === true,
    complete: input.metadataIncomplete !== true,
    sourcePayload,
    suggestionPayload,
    sourceContentType,
    suggestionContentType,
    exec,
    question,
  };
  const inputsDigest = createHash('sha256').update(canonicalJson(inputs)).digest('hex');

  const journal = await records.openEvaluation(externalId);
  try {
    const j = journal.data;
    if (typeof j.inputsDigest === 'string' && j.inputsDigest !== inputsDigest) {
      throw new UsageError(
        'opportunity_inputs_changed',
        `--external-id ${externalId} was already evaluated with other inputs; the service would refuse it (review_opportunity_conflict)`,
        {
          hint: 'one id per output: repeat the original files to retry, or give this new output a new --external-id',
        },
      );
    }
    const context = await agentContext(mcp);
    if (context.allowedWorkflowKeys.length > 0 && !context.allowedWorkflowKeys.includes(input.workflow!)) {
      throw new UsageError(
        'workflow_not_allowed',
        `workflow ${input.workflow} is not in this integration's allow-list (${context.allowedWorkflowKeys.join(', ')})`,
      );
    }
    const prompt = context.profile?.questionAuthority === 'agent_per_request' ? question?.prompt : context.profile?.criterion;
    if (context.profile?.questionAuthority === 'agent_per_request' && !question)
      throw new UsageError(
        'question_required',
        'the bound request profile asks the agent for the question: give --question, --positive-label and --negative-label',
      );
    if (context.profile?.questionAuthority === 'owner_fixed' && question)
      throw new UsageError('question_not_allowed', 'the bound request profile has an owner-fixed question; leave out --question');
    const used = (prompt ?? '').length + JSON.stringify(sourcePayload).length + JSON.stringify(suggestionPayload).length;
    if (used > PROMPT_BUDGET) {
      throw new UsageError(
        'payload_too_large',
        `the question and both payloads as JSON strings take ${used} characters; the service's reviewer prompt leaves ${PROMPT_BUDGET}`,
        { hint: 'shorten the source or the suggestion before evaluating (their hashes freeze them)' },
      );
    }
    const repeated = j.args !== undefined;
    // A retry repeats the journaled arguments byte for byte (execution included).
    const args: ToolArgs = j.args ?? {
      externalOpportunityId: externalId,
      workflowKey: input.workflow,
      riskTier: input.riskTier,
      audiencePolicyHash: context.audiencePolicyHash,
      suggestionCommitment: sha256Text(suggestionPayload),
      sourceEvidence: { reference, hash: sha256Text(sourcePayload) },
      declaredConfidenceBps: confidence,
      criticalRisk: input.criticalRisk === true,
      metadataComplete: input.metadataIncomplete !== true,
      execution: exec,
    };
    if (!repeated)
      await journal.setStep('evaluating', {
        inputsDigest,
        args,
        sourcePayload,
        suggestionPayload,
        sourceContentType,
        suggestionContentType,
        question: question ?? null,
      });
    const doc = await mcp.tool('rateloop_evaluate_review_requirement', args);
    const expected = expectedOpportunityId(context.workspaceId, context.agentId, externalId);
    const env = parseEnvelope(doc, 'rateloop_evaluate_review_requirement', expected);
    checkBinding(env, context);
    const raw = parseReviewDecision(objectField(doc, 'rawResult') ?? {});
    if (
      env.evaluationCommitment !== args.suggestionCommitment ||
      raw.suggestionCommitment !== args.suggestionCommitment ||
      raw.opportunityId !== env.opportunityId
    ) {
      throw new RefusedError(
        'commitment_mismatch',
        `the service froze output ${env.evaluationCommitment}, this output hashes to ${String(args.suggestionCommitment)}: refused`,
      );
    }
    await records.saveOpportunity({
      opportunityId: env.opportunityId,
      externalOpportunityId: externalId,
      // The frozen commitment, which the check above proved equal to the one this output was evaluated with.
      outputCommitment: env.evaluationCommitment,
      sourcePayload,
      suggestionPayload,
      sourceContentType,
      suggestionContentType,
      question,
    });
    await journal.setStep('evaluated', { opportunityId: env.opportunityId });
    return { envelope: env, context, repeated };
  } finally {
    await journal.close();
  }
}

function questionOf(o: EvaluateInput): ReviewQuestion | undefined {
  if (o.question === undefined && o.positiveLabel === undefined && o.negativeLabel === undefined) return undefined;
  const q: ReviewQuestion = {
    kind: 'binary',
    prompt: o.question ?? '',
    positiveLabel: o.positiveLabel ?? '',
    negativeLabel: o.negativeLabel ?? '',
  };
  // eslint-disable-next-line no-control-regex
  const control = /[\u0000-\u001f\u007f]/;
  if (q.prompt.length < 1 || q.prompt.length > 500 || control.test(q.prompt))
    throw new UsageError('invalid_question', '--question must be 1 … 500 characters without control characters');
  for (const [flag, v] of [
    ['--positive-label', q.positiveLabel],
    ['--negative-label', q.negativeLabel],
  ] as const) {
    if (v.length < 1 || v.length > 40 || control.test(v))
      throw new UsageError('invalid_question', `${flag} must be 1 … 40 characters without control characters`);
  }
  if (q.positiveLabel.toLowerCase() === q.negativeLabel.toLowerCase())
    throw new UsageError('invalid_question', 'the positive and negative labels must differ');
  return q;
}

export interface RequestInput {
  source?: string;
  suggestion?: string;
  publication?: string;
  redactionSummary?: string;
  confirmNoSensitiveData?: boolean;
}

export interface Requested {
  envelope: Envelope;
  action: string;
  privateReviewId: string | null;
  deliveryId: string | null;
}

/** `review request`: the exact committed text, from the journal of `review evaluate` (or the files, checked against it). */
export async function requestReview(mcp: WorkspaceMcp, records: ReviewRecords, id: string, input: RequestInput): Promise<Requested> {
  const opportunityId = userId('opportunity', id, 'opportunity');
  const record: Partial<OpportunityRecord> = records.readOpportunity(opportunityId) ?? {};
  let sourcePayload = record.sourcePayload;
  let suggestionPayload = record.suggestionPayload;
  if (input.source !== undefined || input.suggestion !== undefined) {
    if (input.source === undefined || input.suggestion === undefined)
      throw new UsageError('usage', 'give both --source and --suggestion, or neither (then the journal of `review evaluate` is used)');
    const s = await readPayload(input.source, '--source');
    const g = await readPayload(input.suggestion, '--suggestion');
    if ((sourcePayload !== undefined && s !== sourcePayload) || (suggestionPayload !== undefined && g !== suggestionPayload)) {
      throw new UsageError(
        'payload_changed',
        'the files differ from the text evaluated for this opportunity; the service accepts only the committed text',
      );
    }
    sourcePayload = s;
    suggestionPayload = g;
  }
  if (sourcePayload === undefined || suggestionPayload === undefined) {
    throw new UsageError(
      'unknown_opportunity',
      `${opportunityId} was not evaluated from this machine, so its exact text is not journaled`,
      { hint: 'give the exact files that were hashed at evaluation: --source FILE --suggestion FILE' },
    );
  }
  const context = await agentContext(mcp);
  const args: Record<string, unknown> = { opportunityId, sourcePayload, suggestionPayload };
  if (record.question) args.question = record.question;
  const audience = context.profile?.audienceType;
  if (audience === 'private_invited') {
    args.material = {
      kind: 'private',
      sourceContentType: record.sourceContentType ?? 'text/plain',
      suggestionContentType: record.suggestionContentType ?? 'text/plain',
    };
  } else if (input.publication !== undefined) {
    if (!['public', 'synthetic', 'redacted'].includes(input.publication))
      throw new UsageError('invalid_publication', '--publication must be public, synthetic or redacted');
    if (input.confirmNoSensitiveData !== true)
      throw new UsageError('confirmation_required', 'public review material needs --confirm-no-sensitive-data');
    if (input.publication === 'redacted' && (input.redactionSummary ?? '').length < 10)
      throw new UsageError('redaction_summary_required', 'redacted material needs --redaction-summary (10 … 1000 characters)');
    args.material = {
      kind: 'public',
      publication: {
        visibility: 'public',
        dataClassification: input.publication,
        confirmedNoSensitiveData: true,
        ...(input.redactionSummary ? { redactionSummary: input.redactionSummary } : {}),
      },
    };
  }
  const doc = await mcp.tool('rateloop_request_review', args, 60_000);
  const env = parseEnvelope(doc, 'rateloop_request_review', opportunityId);
  checkBinding(env, context);
  let privateReviewId: string | null = null;
  // Any foundation the service names must be a private review of this request profile (one that is not an object
  // names no private review id in its form).
  if (doc.foundation) {
    const foundation = objectField(doc, 'foundation');
    privateReviewId = serviceId('privateReview', foundation?.privateReviewId, 'the private review');
    const rp = objectField(objectField(foundation, 'bindings'), 'requestProfile');
    if (!rp || rp.id !== env.requestProfile.id || rp.version !== env.requestProfile.version || rp.hash !== env.requestProfile.hash) {
      throw refuseBinding(
        'private review request profile',
        `${env.requestProfile.id}@${env.requestProfile.version} ${env.requestProfile.hash}`,
        rp ? `${String(rp.id)}@${String(rp.version)} ${String(rp.hash)}` : null,
      );
    }
  }
  const d = objectField(doc, 'delivery')?.deliveryId;
  const deliveryId = typeof d === 'string' && /^hp[pu]d_[0-9a-f]{40}$/.test(d) ? d : null;
  if (deliveryId)
    await records.saveOpportunity({
      opportunityId,
      deliveryId,
      outputCommitment: record.outputCommitment ?? sha256Text(suggestionPayload),
    });
  return { envelope: env, action: String(doc.action ?? 'unknown'), privateReviewId, deliveryId };
}

export interface OpenReview {
  opportunityId: string;
  state: string;
  nextAction: string;
}

export async function listOpenReviews(
  mcp: WorkspaceMcp,
  o: { limit?: string; cursor?: string; all?: boolean },
): Promise<{ docs: ServiceDoc[]; items: OpenReview[]; nextCursor: string | null }> {
  const limit = o.limit === undefined ? undefined : Number(o.limit);
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1 || limit > 50))
    throw new UsageError('invalid_limit', '--limit must be 1 … 50');
  if (o.cursor !== undefined && (o.cursor.length < 1 || o.cursor.length > 1024))
    throw new UsageError('invalid_cursor', '--cursor must be the nextCursor of an earlier listing');
  const docs: ServiceDoc[] = [];
  const items: OpenReview[] = [];
  let cursor: string | null = o.cursor ?? null;
  for (let page = 0; page < 100; page++) {
    const doc = await mcp.tool('rateloop_list_open_reviews', { ...(cursor ? { cursor } : {}), ...(limit ? { limit } : {}) });
    const listed = arrayField(doc, 'items');
    if (doc.schemaVersion !== OPEN_REVIEWS_SCHEMA || !listed)
      throw new ServiceError(
        'invalid_response',
        `the open reviews have schemaVersion ${JSON.stringify(doc.schemaVersion)}, not ${OPEN_REVIEWS_SCHEMA}`,
      );
    docs.push(doc);
    for (const it of listed) {
      // An item whose id is not in its form is left out of the next steps (it stays visible under `service`).
      const id = isDoc(it) ? it.opportunityId : undefined;
      if (isDoc(it) && isId('opportunity', id))
        items.push({ opportunityId: id, state: String(objectField(it, 'lifecycle')?.state), nextAction: String(it.nextAction) });
    }
    const next = doc.nextCursor;
    cursor = typeof next === 'string' && next.length <= 1024 ? next : null;
    if (!o.all || cursor === null) break;
  }
  return { docs, items, nextCursor: cursor };
}

export async function assuranceState(
  mcp: WorkspaceMcp,
  scope: string,
): Promise<{ doc: ServiceDoc; state: ReturnType<typeof parseAssuranceState> }> {
  const scopeId = userId('scope', scope, 'scope');
  const doc = await mcp.tool('rateloop_get_assurance_state', { scopeId });
  return { doc, state: parseAssuranceState(doc, scopeId) };
}

/** The command that continues an open review, for `next` (ids already checked). */
export function nextFor(state: string, opportunityId: string): string | undefined {
  if (state === 'approval_required' || state === 'request_ready') return `loopsign review request ${opportunityId}`;
  if (state === 'pending') return `loopsign review wait ${opportunityId}`;
  if (state === 'blocked') return 'loopsign review policy';
  if (state === 'skipped') return undefined;
  return `loopsign review result ${opportunityId}`;
}
