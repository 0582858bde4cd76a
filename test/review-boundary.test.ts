// What a lying workspace service may send where the review commands read it (issue 23: `unknown` and parsers at the
// boundary): the review envelope, the agent context, the review decision, the assurance state, the open-review list,
// the registration, the assurance routes' projects and runs, and a private review's answer. Each document is the live
// corpus's, mutated one field at a time into another shape: refused with the documented code and exit code (a document
// loopsign cannot use: invalid_response, exit 3; an id not in its form: malformed_service_id, exit 5; an answer about
// something else: exit 5), or, for a field only shown, read as absent — never a parser's exception (exit 1). The user's
// execution file is held to its form the same way (exit 2). In process.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LoopsignError } from '../src/errors.js';
import { parseProject, parseProjectCreated, parseProjectList, parseRunStatus } from '../src/review/assurance.js';
import { parseEnvelope } from '../src/review/envelope.js';
import { reviewResult } from '../src/review/follow.js';
import { evaluate, listOpenReviews, parseAgentContext, parseAssuranceState, parseReviewDecision } from '../src/review/invited.js';
import { checkPrivateReviewResponse } from '../src/review/private-review.js';
import type { ReviewRecords } from '../src/review/records.js';
import { parseRegistration, type WorkspaceMcp } from '../src/review/workspace-mcp.js';
import { readVector } from './helpers/cli.js';

const corpus = readVector('live/review.json');
const body = (id: string) => corpus.cases.find((c: { id: string }) => c.id === id).response.body;
const content = (id: string) => body(id).result.structuredContent;

type Doc = Record<string, any>;
/** The document with the value at a dotted path replaced (or removed, for undefined). */
function mutate(doc: Doc, at: string, value: unknown): Doc {
  const copy = structuredClone(doc);
  const keys = at.split('.');
  let o = copy;
  for (const k of keys.slice(0, -1)) o = o[k];
  if (value === undefined) delete o[keys.at(-1)!];
  else o[keys.at(-1)!] = value;
  return copy;
}

function outcome(f: () => unknown): { code: string; exit: number } {
  try {
    f();
    return { code: 'passed', exit: 0 };
  } catch (error) {
    if (error instanceof LoopsignError) return { code: error.code, exit: error.exitCode };
    return { code: `exception: ${(error as Error).message}`, exit: 1 };
  }
}
async function outcomeOf(p: Promise<unknown>): Promise<{ code: string; exit: number }> {
  try {
    await p;
    return { code: 'passed', exit: 0 };
  } catch (error) {
    if (error instanceof LoopsignError) return { code: error.code, exit: error.exitCode };
    return { code: `exception: ${(error as Error).message}`, exit: 1 };
  }
}

const INVALID = { code: 'invalid_response', exit: 3 };
const MALFORMED_ID = { code: 'malformed_service_id', exit: 5 };
const SHAPES = ['text', 7, true, [], {}, null];
/** [path, value] pairs for every shape at each path. */
const at = (paths: string[], shapes: unknown[] = SHAPES) => paths.flatMap((p) => shapes.map((v) => [p, JSON.stringify(v), v] as const));

describe('the review envelope (rateloop.human-review-tool-envelope.v1)', () => {
  const env = content('mcp/envelope/pending');

  it('the corpus envelope passes as it is', () => {
    expect(parseEnvelope(env, 'rateloop_wait_for_review')).toMatchObject({ state: 'pending', terminal: false });
  });

  it.each([
    ...at(
      [
        'integrationId',
        'lifecycle',
        'lifecycle.state',
        'continuation',
        'continuation.cursor',
        'frozen',
        'frozen.requestProfile',
        'frozen.binding',
        'frozen.evaluationCommitment',
      ],
      [7, true, [], {}, 1.5],
    ),
    ...at(['lifecycle', 'continuation', 'frozen'], ['2', 'text']),
    ...at(['lifecycle.revision', 'continuation.retryAfterMs', 'frozen.requestProfile.version'], [true, [], {}, 1.5, '2', 'text', null]),
  ])('%s = %s: a document loopsign cannot use (invalid_response, exit 3)', (field, _, bad) => {
    expect(outcome(() => parseEnvelope(mutate(env, field, bad), 'rateloop_wait_for_review'))).toEqual(INVALID);
  });

  it.each(at(['opportunityId', 'workspaceId'], ['text', 7, true, [], {}, null]))(
    '%s = %s: not an id in its form (malformed_service_id, exit 5)',
    (field, _, bad) => {
      expect(outcome(() => parseEnvelope(mutate(env, field, bad), 'rateloop_wait_for_review'))).toEqual(MALFORMED_ID);
    },
  );

  it.each(at(['route', 'wait', 'lifecycle.reasonCodes'], ['text', 7, true, [], null]))('%s = %s: read as absent', (field, _, bad) => {
    const e = parseEnvelope(mutate(env, field, bad), 'rateloop_wait_for_review');
    expect(e.lane === 'unknown' || typeof e.lane === 'string').toBe(true);
    expect(Array.isArray(e.reasonCodes)).toBe(true);
  });

  it.each([
    ...at(['wait.cursor', 'wait.deliveryId', 'wait.status', 'wait.responseCount'], [[3], {}, true, 1.5]),
    ...at(['wait.cursor', 'wait.deliveryId'], ['x:y', 'hppd_short']),
    ...at(['wait.responseCount'], ['3']),
  ])('wait %s = %s: that part of the wait is absent (null)', (field, _, bad) => {
    const doc = mutate(
      { ...env, wait: { cursor: '2:0', deliveryId: `hppd_${'a'.repeat(40)}`, status: 'open', responseCount: 0 } },
      field,
      bad,
    );
    const w = parseEnvelope(doc, 'rateloop_wait_for_review').wait!;
    expect(w[field.split('.')[1] as keyof typeof w]).toBeNull();
  });
});

describe('the agent context (rateloop_get_agent_context)', () => {
  const doc = content('mcp/get-agent-context');

  it('the corpus context passes as it is', () => {
    expect(parseAgentContext(doc).allowedWorkflowKeys).toEqual(['support-reply']);
  });

  it.each([
    ...at(['reviewPolicy', 'reviewPolicy.audiencePolicyHash', 'integrationId', 'agentId'], [7, true, [], {}, null]),
    ...at(['reviewPolicy.audiencePolicyHash'], ['sha256:short', 'a b']),
    ...at(['integrationId', 'agentId'], ['a b', '../x']),
  ])('%s = %s: invalid_response, exit 3', (field, _, bad) => {
    expect(outcome(() => parseAgentContext(mutate(doc, field, bad)))).toEqual(INVALID);
  });

  it.each(at(['allowedWorkflowKeys'], ['support-reply', 7, { 0: 'support-reply' }, [7, null, ['x']]]))(
    '%s = %s: no workflow key is read from it',
    (field, _, bad) => {
      expect(parseAgentContext(mutate(doc, field, bad)).allowedWorkflowKeys).toEqual([]);
    },
  );

  it.each(at(['humanReview', 'humanReview.requestProfile', 'humanReview.requestProfile.version'], ['text', '1', [], true]))(
    '%s = %s: no bound request profile',
    (field, _, bad) => {
      const withProfile = mutate(doc, 'humanReview', {
        status: 'enabled',
        requestProfile: { profileId: 'rrp_x', version: 1, hash: `sha256:${'a'.repeat(64)}`, questionAuthority: 'owner_fixed' },
      });
      expect(parseAgentContext(withProfile).profile).not.toBeNull();
      expect(parseAgentContext(mutate(withProfile, field, bad)).profile).toBeNull();
    },
  );
});

describe('the review decision, the assurance state and the registration', () => {
  const decision = body('assurance-review/post');
  const state = content('mcp/get-assurance-state');
  const registration = content('mcp/registration-status-approved');

  it('the corpus documents pass as they are', () => {
    expect(parseReviewDecision(decision).decision).toMatch(/required|recommended|skip/);
    expect(parseAssuranceState(state).reviewRateBps).toBe(10000);
    expect(parseRegistration(registration).status).toBe('approved');
  });

  it.each([
    ...at(['decision', 'suggestionCommitment', 'lifecycle', 'lifecycle.state'], [['required'], 7, {}, null]),
    ...at(['decision', 'suggestionCommitment'], ['required ']),
  ])('decision %s = %s: invalid_response, exit 3', (field, _, bad) => {
    expect(outcome(() => parseReviewDecision(mutate(decision, field, bad)))).toEqual(INVALID);
  });

  it.each(at(['reviewRateBps'], ['10000', [10000], 1.5, null, true]))('state %s = %s: invalid_response, exit 3', (field, _, bad) => {
    expect(outcome(() => parseAssuranceState(mutate(state, field, bad)))).toEqual(INVALID);
  });

  it.each(
    at(['registration', 'registration.status'], [['approved'], 7, null, 'approved']).filter(
      ([f, , v]) => !(f === 'registration.status' && v === 'approved'),
    ),
  )('registration %s = %s: invalid_response, exit 3', (field, _, bad) => {
    expect(outcome(() => parseRegistration(mutate(registration, field, bad)))).toEqual(INVALID);
  });

  it.each(at(['integration', 'integration.workspaceId', 'integration.integrationId'], [['x'], 7, 'text', null]))(
    'registration %s = %s: read as absent',
    (field, _, bad) => {
      const r = parseRegistration(mutate(registration, field, bad));
      expect(r.status).toBe('approved');
      if (field !== 'integration.integrationId') expect(r.workspaceId).toBeNull();
    },
  );
});

describe('the open-review list (rateloop_list_open_reviews)', () => {
  const page = content('mcp/list-open-reviews/page-1');
  const list = (doc: unknown) => listOpenReviews({ tool: async () => doc } as unknown as WorkspaceMcp, {});

  it('the corpus page passes as it is', async () => {
    expect((await list(page)).items.length).toBeGreaterThan(0);
  });

  it.each([
    ['items', 'text'],
    ['items', 7],
    ['items', {}],
    ['items', null],
  ] as const)('%s = %j: invalid_response, exit 3', async (field, bad) => {
    expect(await outcomeOf(list(mutate(page, field, bad)))).toEqual(INVALID);
  });

  it.each([[null], [7], ['aop_x'], [[]], [{ opportunityId: ['aop_x'] }], [{ opportunityId: 7 }]])(
    'an item %j is left out of the next steps',
    async (item) => {
      const r = await list({ ...page, items: [item, ...page.items] });
      expect(r.items).toHaveLength(page.items.length);
    },
  );

  it.each([[7], [['c']], [{}], ['x'.repeat(1025)]])('nextCursor %j: no next page', async (cursor) => {
    expect((await list({ ...page, nextCursor: cursor })).nextCursor).toBeNull();
  });
});

describe('the assurance routes: projects and runs', () => {
  const projects = body('assurance-projects/list');
  const project = body('assurance-project/get');
  const created = body('assurance-projects/create-1');
  const runId = `hau_${'0'.repeat(32)}`;
  const run = {
    schemaVersion: 'rateloop.human-assurance.v2',
    runId,
    runStatus: 'collecting',
    responses: { valid: 3, baseline: 1, candidate: 1, tie: 1 },
  };

  it('the corpus documents pass as they are', () => {
    expect(parseProjectList(projects).projects.length).toBeGreaterThan(0);
    expect(parseProject(project, project.projectId).runs).toEqual([]);
    expect(parseProjectCreated(created).projectId).toBe(created.projectId);
    expect(parseRunStatus(run, runId)).toMatchObject({ runStatus: 'collecting', terminal: false });
  });

  it.each(at(['projects', 'schemaVersion'], ['text', 7, {}, null]))('list %s = %s: invalid_response, exit 3', (field, _, bad) => {
    expect(outcome(() => parseProjectList(mutate(projects, field, bad)))).toEqual(INVALID);
  });

  it.each([[null], [7], [[]], [{ projectId: ['hap_x'] }], [{ projectId: 'hap_x' }]])('a listed project %j is left out', (entry) => {
    expect(parseProjectList({ ...projects, projects: [entry, ...projects.projects] }).projects).toHaveLength(projects.projects.length);
  });

  it.each(at(['retentionDays', 'runCount'], ['90', [90], 1.5, true]))('a project %s = %s is shown as unknown (null)', (field, _, bad) => {
    const first = parseProjectList({ ...projects, projects: [{ ...projects.projects[0], [field]: bad }] }).projects[0]!;
    expect(first[field as 'retentionDays' | 'runCount']).toBeNull();
  });

  it.each(at(['runs', 'suites', 'policies'], ['text', 7, {}, null]))('project %s = %s: invalid_response, exit 3', (field, _, bad) => {
    expect(outcome(() => parseProject(mutate(project, field, bad), project.projectId))).toEqual(INVALID);
  });

  it.each([[null], [7], [{ runId: ['hau_x'] }]])('a run %j in the project is left out', (entry) => {
    expect(parseProject({ ...project, runs: [entry] }, project.projectId).runs).toEqual([]);
  });

  it.each(at(['projectId', 'workspaceId'], ['text', 7, [], null]))('created %s = %s: malformed_service_id, exit 5', (field, _, bad) => {
    expect(outcome(() => parseProjectCreated(mutate(created, field, bad)))).toEqual(MALFORMED_ID);
  });

  it.each(at(['runStatus'], ['Collecting', ['collecting'], 7, null]))('run %s = %s: invalid_response, exit 3', (field, _, bad) => {
    expect(outcome(() => parseRunStatus(mutate(run, field, bad), runId))).toEqual(INVALID);
  });

  it.each(at(['responses.baseline', 'responses.candidate', 'responses.tie'], ['1', [1], 0.5, null, true]))(
    'run %s = %s: the counts do not add up (invalid_response, exit 3)',
    (field, _, bad) => {
      expect(outcome(() => parseRunStatus(mutate(run, field, bad), runId))).toEqual(INVALID);
    },
  );

  it.each([[['hau_x']], [7], [{ id: runId }]])('runId %j: an answer about another run (other_run, exit 5)', (bad) => {
    expect(outcome(() => parseRunStatus({ ...run, runId: bad }, runId))).toEqual({ code: 'other_run', exit: 5 });
  });
});

describe("a private review's answer (POST /api/agent/v1/assurance/private-reviews)", () => {
  const hash = `sha256:${'b'.repeat(64)}`;
  const asked = {
    idempotencyKey: 'loopsign-key-1',
    integrationId: 'agi_x',
    projectId: `hap_${'1'.repeat(32)}`,
    requestProfile: { id: 'rrp_support', version: 3, hash },
    cohortId: 'cohort-1',
    dataClassification: 'confidential',
    source: { contentType: 'text/plain', bytesBase64: 'YQ==' },
    suggestion: { contentType: 'text/plain', bytesBase64: 'Yg==' },
  };
  const answer = {
    schemaVersion: 'rateloop.human-assurance.v2',
    privateReviewId: `hpr_${'2'.repeat(32)}`,
    bindings: { project: { projectId: asked.projectId }, requestProfile: asked.requestProfile, cohort: { cohortId: asked.cohortId } },
    status: 'ready_for_assignment',
    responseDeadline: '2026-11-29T12:00:00.000Z',
    artifacts: { sourceArtifactId: `art_${'3'.repeat(32)}`, suggestionArtifactId: `art_${'4'.repeat(32)}` },
  };

  it('the well-formed answer passes', () => {
    expect(checkPrivateReviewResponse(answer, asked)).toMatchObject({ status: 'ready_for_assignment' });
  });

  it.each(
    at(
      ['bindings', 'bindings.project', 'bindings.requestProfile', 'bindings.requestProfile.version', 'bindings.cohort'],
      ['x', ['x'], 7, null, '3'],
    ),
  )('%s = %s: bound to something else (binding_mismatch, exit 5)', (field, _, bad) => {
    expect(outcome(() => checkPrivateReviewResponse(mutate(answer, field, bad), asked))).toEqual({ code: 'binding_mismatch', exit: 5 });
  });

  it.each(at(['status', 'responseDeadline'], [['ready_for_assignment'], 7, null, 'someday']))(
    '%s = %s: invalid_response, exit 3',
    (field, _, bad) => {
      expect(outcome(() => checkPrivateReviewResponse(mutate(answer, field, bad), asked))).toEqual(INVALID);
    },
  );

  it.each(at(['artifacts', 'artifacts.sourceArtifactId'], [['art_x'], 7, null, 'x']))(
    '%s = %s: malformed_service_id, exit 5',
    (field, _, bad) => {
      expect(outcome(() => checkPrivateReviewResponse(mutate(answer, field, bad), asked))).toEqual(MALFORMED_ID);
    },
  );
});

describe('a review result (rateloop_get_review_result)', () => {
  const env = content('mcp/envelope/pending');
  const records = { readOpportunity: () => undefined } as unknown as ReviewRecords;
  const read = (result: unknown) =>
    reviewResult({ tool: async () => ({ ...env, result }) } as unknown as WorkspaceMcp, records, env.opportunityId);

  it.each([[{ opportunityId: `aop_${'9'.repeat(40)}` }], [{ opportunityId: [env.opportunityId] }], [{ opportunityId: 7 }]])(
    'a result about %j: another opportunity (other_opportunity, exit 5)',
    async (result) => {
      expect(await outcomeOf(read(result))).toEqual({ code: 'other_opportunity', exit: 5 });
    },
  );

  it.each([['text'], [[{ opportunityId: 'aop_other' }]], [7]])(
    'a result %j that is not an object names no opportunity: passed through',
    async (result) => {
      expect((await read(result)).result).toEqual(result);
    },
  );
});

describe("the user's --execution file (review evaluate)", () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-review-boundary-'));
  const file = (name: string, text: string) => {
    const f = path.join(dir, name);
    writeFileSync(f, text);
    return f;
  };
  const span = { spanId: 'primary', parentSpanId: null, role: 'primary', provider: 'OpenAI', requestedModel: 'gpt-5.1' };
  const execution = { externalExecutionId: 'exec-1', status: 'completed', primarySpanId: 'primary', generationSpans: [span] };
  // Nothing reaches the service: the file is refused before the first call.
  const mcp = { tool: async () => Promise.reject(new Error('the service was called')) } as unknown as WorkspaceMcp;
  const records = {} as ReviewRecords;
  const run = (exec: unknown) =>
    evaluate(mcp, records, {
      externalId: 'ticket-1',
      workflow: 'support-reply',
      riskTier: 'low',
      source: file('source.txt', 'the source'),
      suggestion: file('suggestion.txt', 'the suggestion'),
      execution: file(`exec-${Math.random().toString(16).slice(2)}.json`, JSON.stringify(exec)),
    });

  it.each([
    ['a null span', [null, span]],
    ['a string span', ['primary', span]],
    ['a number span', [7, span]],
    ['an array span', [[span]]],
  ])('generationSpans holding %s: unusable input (invalid_execution, exit 2)', async (_what, spans) => {
    expect(await outcomeOf(run({ ...execution, generationSpans: spans }))).toEqual({ code: 'invalid_execution', exit: 2 });
  });

  it.each([
    ['null', null],
    ['an array', [execution]],
    ['a string', 'exec'],
  ])('a file holding %s: invalid_execution, exit 2', async (_what, doc) => {
    expect(await outcomeOf(run(doc))).toEqual({ code: 'invalid_execution', exit: 2 });
  });
});
