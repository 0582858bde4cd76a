// The workspace MCP tool listings (review.md §5.3, §5.5): names, annotations and input schemas as the service
// publishes them; the descriptions are the sandbox's own short ones.
type Obj = Record<string, unknown>;

const str = (min: number, max: number, nullable = false): Obj => ({
  maxLength: max,
  minLength: min,
  type: nullable ? ['string', 'null'] : 'string',
});
const int = (min: number, max: number, nullable = false): Obj => ({
  maximum: max,
  minimum: min,
  type: nullable ? ['integer', 'null'] : 'integer',
});
const SHA = { pattern: '^sha256:[0-9a-f]{64}$', type: 'string' };
const U32 = 2147483647;
const obj = (properties: Obj, required?: string[]): Obj => ({
  additionalProperties: false,
  properties,
  ...(required ? { required } : {}),
  type: 'object',
});
const hints = (readOnly: boolean, destructive: boolean, idempotent: boolean, openWorld: boolean) => ({
  readOnlyHint: readOnly,
  destructiveHint: destructive,
  idempotentHint: idempotent,
  openWorldHint: openWorld,
});

const span = obj(
  {
    spanId: str(1, 160),
    parentSpanId: str(1, 160, true),
    role: { enum: ['primary', 'subagent', 'supporting'], type: 'string' },
    provider: str(1, 120),
    requestedModel: str(1, 200),
    resolvedModel: str(1, 200, true),
    modelVersion: str(1, 160, true),
    reasoningEffort: str(1, 80, true),
    serviceTier: str(1, 80, true),
    startedAt: str(20, 40, true),
    completedAt: str(20, 40, true),
    timeToFirstOutputMs: int(0, U32, true),
    inputTokens: int(0, U32, true),
    cachedInputTokens: int(0, U32, true),
    outputTokens: int(0, U32, true),
    reasoningOutputTokens: int(0, U32, true),
    responseIdHash: { pattern: '^sha256:[0-9a-f]{64}$', type: ['string', 'null'] },
    finishReason: str(1, 160, true),
  },
  ['spanId', 'role', 'provider', 'requestedModel'],
);

export const REVIEW_TOOLS: { name: string; annotations: Obj; description: string; inputSchema: Obj }[] = [
  {
    name: 'rateloop_get_agent_context',
    annotations: hints(true, false, true, false),
    description: 'The agent version and human-review configuration bound to this credential.',
    inputSchema: obj({}),
  },
  {
    name: 'rateloop_list_open_reviews',
    annotations: hints(true, false, true, false),
    description: 'Open review opportunities of this integration, to continue after a restart.',
    inputSchema: obj({ cursor: str(1, 1024, true), limit: int(1, 50) }),
  },
  {
    name: 'rateloop_get_assurance_state',
    annotations: hints(true, false, true, false),
    description: "The review rate and human agreement of one of this integration's scopes.",
    inputSchema: obj({ scopeId: str(1, 160) }, ['scopeId']),
  },
  {
    name: 'rateloop_evaluate_review_requirement',
    annotations: hints(false, false, true, false),
    description:
      'Record one output by its commitments and provenance, and receive the frozen policy decision. Never send payload text here.',
    inputSchema: obj(
      {
        externalOpportunityId: str(1, 160),
        workflowKey: str(1, 160),
        riskTier: { pattern: '^[a-z][a-z0-9_-]{0,63}$', type: 'string' },
        audiencePolicyHash: SHA,
        suggestionCommitment: { ...SHA, description: 'SHA-256 of the exact UTF-8 output awaiting release.' },
        sourceEvidence: obj(
          {
            reference: { description: 'An opaque reference, never source text.', ...str(1, 240) },
            hash: { ...SHA, description: 'SHA-256 of the exact UTF-8 reviewer-visible request.' },
          },
          ['reference', 'hash'],
        ),
        declaredConfidenceBps: int(0, 10000, true),
        criticalRisk: { type: 'boolean' },
        metadataComplete: { type: 'boolean' },
        execution: obj(
          {
            externalExecutionId: str(1, 160),
            status: { enum: ['completed', 'failed'], type: 'string' },
            startedAt: str(20, 40, true),
            completedAt: str(20, 40, true),
            toolCallCount: int(0, U32, true),
            toolDurationMs: int(0, U32, true),
            primarySpanId: str(1, 160),
            generationSpans: { items: span, maxItems: 64, minItems: 1, type: 'array' },
          },
          ['externalExecutionId', 'status', 'primarySpanId', 'generationSpans'],
        ),
      },
      [
        'externalOpportunityId',
        'workflowKey',
        'riskTier',
        'audiencePolicyHash',
        'suggestionCommitment',
        'sourceEvidence',
        'metadataComplete',
        'execution',
      ],
    ),
  },
  {
    name: 'rateloop_request_review',
    annotations: hints(false, true, true, true),
    description: 'Route a required opportunity with the exact committed source and output text.',
    inputSchema: obj(
      {
        opportunityId: str(1, 160),
        sourcePayload: { description: 'The exact text hashed into sourceEvidence.hash.', ...str(1, 3000) },
        suggestionPayload: { description: 'The exact text hashed into suggestionCommitment.', ...str(1, 3000) },
        question: obj(
          { kind: { const: 'binary', type: 'string' }, prompt: str(1, 500), positiveLabel: str(1, 40), negativeLabel: str(1, 40) },
          ['kind', 'prompt', 'positiveLabel', 'negativeLabel'],
        ),
        material: {
          oneOf: [
            obj(
              {
                kind: { const: 'public', type: 'string' },
                publication: {
                  additionalProperties: false,
                  allOf: [
                    {
                      if: { properties: { dataClassification: { const: 'redacted' } }, required: ['dataClassification'] },
                      then: { required: ['redactionSummary'] },
                    },
                  ],
                  properties: {
                    visibility: { enum: ['public'], type: 'string' },
                    dataClassification: { enum: ['public', 'synthetic', 'redacted'], type: 'string' },
                    confirmedNoSensitiveData: { enum: [true], type: 'boolean' },
                    redactionSummary: str(10, 1000),
                  },
                  required: ['visibility', 'dataClassification', 'confirmedNoSensitiveData'],
                  type: 'object',
                },
              },
              ['kind', 'publication'],
            ),
            obj({ kind: { const: 'private', type: 'string' }, sourceContentType: str(1, 160), suggestionContentType: str(1, 160) }, [
              'kind',
              'sourceContentType',
              'suggestionContentType',
            ]),
          ],
        },
      },
      ['opportunityId', 'sourcePayload', 'suggestionPayload'],
    ),
  },
  {
    name: 'rateloop_wait_for_review',
    annotations: hints(false, false, true, false),
    description: 'Wait briefly for a requested review; finalizes a review whose response window has passed.',
    inputSchema: obj(
      {
        opportunityId: str(1, 160),
        cursor: { pattern: '^[0-9]{1,16}(?::[0-9]{1,16})?$', type: ['string', 'null'] },
        timeoutMs: int(1, 60000),
      },
      ['opportunityId'],
    ),
  },
  {
    name: 'rateloop_get_review_result',
    annotations: hints(false, false, true, false),
    description: 'The terminal result of a requested review; finalizes it on the service.',
    inputSchema: obj({ opportunityId: str(1, 160) }, ['opportunityId']),
  },
];

export const PAIRING_TOOLS = [
  {
    name: 'rateloop_register_agent',
    annotations: hints(false, false, false, false),
    description: 'Register this agent once, for the workspace owner to approve.',
    inputSchema: obj(
      {
        externalId: str(1, 160),
        displayName: str(1, 120),
        description: { maxLength: 1000, type: ['string', 'null'] },
        provider: str(1, 120),
        model: str(1, 160),
        modelVersion: { maxLength: 160, type: ['string', 'null'] },
        environment: { enum: ['staging', 'production'], type: 'string' },
        requestedWorkflowKeys: { items: str(1, 160), maxItems: 32, minItems: 1, type: 'array' },
      },
      ['externalId', 'displayName', 'provider', 'model', 'environment', 'requestedWorkflowKeys'],
    ),
  },
  {
    name: 'rateloop_get_registration_status',
    annotations: hints(true, false, true, false),
    description: 'Where the registration stands.',
    inputSchema: obj({}),
  },
];

export const INSTRUCTIONS = {
  integration:
    'Sandbox workspace. Read the bound policy with rateloop_get_agent_context, evaluate each eligible output with rateloop_evaluate_review_requirement (commitments only), request the review with the exact committed text, then wait for the result.',
  pairing:
    'Sandbox workspace pairing. Register with rateloop_register_agent once, then check rateloop_get_registration_status while the owner reviews it.',
};
