// The live review corpus (test/fixtures/vectors/live/review.json): what the service's own route handlers and
// workspace MCP dispatcher answered. Every recorded response is replayed over HTTP to loopsign's real clients (the
// MCP SDK transport with loopsign's workspace fetch, undici for the assurance routes) and read by loopsign's own
// parsing; the test checks what loopsign derives from each — the state, the §5.6.4 verdict, or the error code and
// exit code a user would see — and that what loopsign sends looks like the recorded requests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LoopsignError } from '../src/errors.js';
import { AssuranceClient, parseProject, parseProjectCreated, parseRunStatus } from '../src/review/assurance.js';
import { readCredential, type Credential } from '../src/review/credential.js';
import { parseEnvelope, reviewVerdict } from '../src/review/envelope.js';
import { settle } from '../src/review/follow.js';
import { gateTrustFrom, type GateTrust } from '../src/review/gate.js';
import { expectedOpportunityId, parseAgentContext, parseAssuranceState, parseReviewDecision } from '../src/review/invited.js';
import { parseRegistration, WorkspaceMcp } from '../src/review/workspace-mcp.js';
import { capture } from './helpers/capture.js';
import { readVector, registerSecret } from './helpers/cli.js';
import { replayServer, type Recorded, type Replay } from './helpers/replay.js';

const corpus = readVector('live/review.json');
const meta = corpus.meta;
const cases: any[] = corpus.cases;
const byId = (id: string) => {
  const c = cases.find((x) => x.id === id);
  if (!c) throw new Error(`no corpus case ${id}`);
  return c;
};
const rec = (id: string): Recorded => byId(id).response;
registerSecret(meta.apiKey.value);

let replay: Replay;
let credential: Credential;
let trust: GateTrust;
const covered = new Set<string>();
const sleeps: number[] = [];

beforeAll(async () => {
  replay = await replayServer();
  credential = await readCredential({ apiKeyEnv: 'LOOPSIGN_CORPUS_KEY' }, { LOOPSIGN_CORPUS_KEY: meta.apiKey.value });
  const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-corpus-review-'));
  const pin = path.join(dir, 'gate.spki.txt');
  writeFileSync(pin, meta.gateSigningKey.publicKeySpkiBase64url + '\n');
  trust = (await gateTrustFrom({ gateKey: pin }))!;
});
afterAll(async () => {
  await replay?.close();
  delete process.env.LOOPSIGN_CORPUS_KEY;
  // The count line of this suite (every recorded response is fed to the client).
  console.log(`live corpus (review.json): ${covered.size} of ${cases.length} recorded responses read by loopsign's clients`);
});

const mcp = (o: { maxRetryAfterSeconds?: number } = {}) =>
  new WorkspaceMcp(replay.url, credential, undefined, {
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    maxRetryAfterSeconds: o.maxRetryAfterSeconds ?? 5,
  });
const assurance = () => new AssuranceClient(replay.url, credential);
/** An MCP exchange: initialize and its notification first (as the SDK connects), then the case's answers. */
const connectThen = (...r: Recorded[]) => replay.queue(rec('mcp/initialize'), rec('mcp/notification'), ...r);

async function failure(p: Promise<unknown>): Promise<{ code: string; exitCode: number; details: any; message: string }> {
  try {
    await p;
  } catch (error) {
    if (!(error instanceof LoopsignError)) throw error;
    return { code: error.code, exitCode: error.exitCode, details: error.details, message: error.message };
  }
  throw new Error('expected a refusal');
}

function done(id: string, n = 1): void {
  expect(replay.pending(), `${id}: every queued response was asked for`).toBe(0);
  covered.add(id);
  capture.count('live corpus: review responses read by loopsign', id, n);
}

const toolOf = (id: string) => byId(id).request.body.params.name as string;
const argsOf = (id: string) => byId(id).request.body.params.arguments as Record<string, unknown>;
const sha = (s: string) => `sha256:${createHash('sha256').update(s, 'utf8').digest('hex')}`;
/** The exact suggestion text each external opportunity id was evaluated with (the evaluate cases' inputs). */
const suggestionOf = (externalId: string) =>
  cases.find((c) => c.inputs && c.request.body?.params?.arguments?.externalOpportunityId === externalId)?.inputs.suggestionPayload as
    | string
    | undefined;

describe('workspace MCP answers', () => {
  it.each(['mcp/initialize', 'mcp/initialize-old-version', 'mcp/initialize-unknown-version'])(
    '%s: the SDK client connects and lists the seven review tools',
    async (id) => {
      replay.queue(rec(id), rec('mcp/notification'), rec('mcp/tools-list'));
      const m = mcp();
      const tools = (await m.listTools()).map((t) => t.name).sort();
      await m.close();
      expect(tools).toEqual([
        'rateloop_evaluate_review_requirement',
        'rateloop_get_agent_context',
        'rateloop_get_assurance_state',
        'rateloop_get_review_result',
        'rateloop_list_open_reviews',
        'rateloop_request_review',
        'rateloop_wait_for_review',
      ]);
      done(id);
      for (const also of ['mcp/notification', 'mcp/tools-list']) {
        covered.add(also);
        capture.count('live corpus: review responses read by loopsign', also);
      }
    },
  );

  it('what loopsign sends looks like the recorded requests (headers, no Origin, negotiated protocol version)', async () => {
    const before = replay.requests.length;
    connectThen(rec('mcp/ping'));
    const m = mcp();
    await m.ping();
    await m.close();
    const sent = replay.requests.slice(before);
    expect(sent.map((r) => r.method)).toEqual(['POST', 'POST', 'POST']); // no GET: no SSE poll for an API-key principal
    const ping = sent[2]!;
    const recorded = byId('mcp/ping').request.headers;
    for (const h of ['accept', 'content-type', 'mcp-protocol-version', 'authorization']) expect(ping.headers[h], h).toBe(recorded[h]);
    expect(ping.headers.origin).toBeUndefined();
    expect(JSON.parse(sent[0]!.body).params).toMatchObject({
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'loopsign' },
    });
    done('mcp/ping');
  });

  it('a pairing key: only the registration tools; a call to a review tool is refused naming the registration (exit 6)', async () => {
    replay.queue(rec('mcp/pairing/initialize'), rec('mcp/notification'), rec('mcp/pairing/tools-list'));
    let m = mcp();
    expect((await m.listTools()).map((t) => t.name).sort()).toEqual(['rateloop_get_registration_status', 'rateloop_register_agent']);
    await m.close();
    done('mcp/pairing/initialize');
    done('mcp/pairing/tools-list');
    replay.queue(
      rec('mcp/pairing/initialize'),
      rec('mcp/notification'),
      rec('mcp/unknown-tool'),
      rec('mcp/pairing/tools-list'),
      rec('mcp/pairing/registration-status'),
    );
    m = mcp();
    const f = await failure(m.tool('rateloop_get_agent_context'));
    await m.close();
    expect(f).toMatchObject({ code: 'agent_pairing_not_approved', exitCode: 6 });
    expect(f.message).toMatch(/registration claimed/);
    done('mcp/pairing/registration-status');
    done('mcp/unknown-tool');
  });

  it.each(['mcp/pairing/register-agent', 'mcp/pairing/registration-status', 'mcp/registration-status-approved'])(
    '%s: the registration status is read',
    async (id) => {
      connectThen(rec(id));
      const m = mcp();
      const r = parseRegistration(await m.tool(toolOf(id), argsOf(id)));
      await m.close();
      expect(r.status).toBe(id.endsWith('approved') ? 'approved' : 'claimed');
      expect(r.workspaceId).toBe(meta.workspace.workspaceId);
      if (id.endsWith('approved')) expect(r.integrationId).toBe(meta.workspace.integrationId);
      done(id);
    },
  );

  it('mcp/get-agent-context: the bound policy (audience hash, workflows, request profile)', async () => {
    connectThen(rec('mcp/get-agent-context'));
    const m = mcp();
    const c = parseAgentContext(await m.tool('rateloop_get_agent_context'));
    await m.close();
    expect(c).toMatchObject({
      workspaceId: meta.workspace.workspaceId,
      integrationId: meta.workspace.integrationId,
      agentId: meta.workspace.agentId,
      allowedWorkflowKeys: ['support-reply'],
      humanReviewStatus: 'configured',
      authority: 'check_only',
    });
    expect(c.audiencePolicyHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(c.profile).toMatchObject({ questionAuthority: 'owner_fixed', audienceType: 'public_network', version: 1 });
    done('mcp/get-agent-context');
  });

  it.each([
    ['mcp/get-agent-context-extra-key', 'invalid_tool_arguments', 3],
    ['mcp/evaluate/conflict', 'review_opportunity_conflict', 3],
    ['mcp/evaluate/spoofed-agent', 'invalid_tool_arguments', 3],
    ['mcp/evaluate/wrong-audience-hash', 'review_policy_mismatch', 3],
    ['mcp/evaluate/workflow-not-allowed', 'workflow_not_allowed', 3],
    ['mcp/evaluate/bad-execution', 'invalid_execution_provenance', 3],
    ['mcp/request-review/unknown-opportunity', 'review_opportunity_not_found', 3],
    ['mcp/wait/not-requested', 'review_not_requested', 7],
    ['mcp/wait/bad-timeout', 'review_not_requested', 7],
    ['mcp/result/not-requested', 'review_not_requested', 7],
    ['mcp/list-open-reviews/bad-cursor', 'invalid_open_review_query', 3],
    ['mcp/get-assurance-state/unknown', 'assurance_state_not_found', 3],
  ])('%s: a tool error, read from structuredContent → %s (exit %i)', async (id, code, exit) => {
    connectThen(rec(id));
    const m = mcp();
    const f = await failure(m.tool(toolOf(id), argsOf(id)));
    await m.close();
    expect(f).toMatchObject({ code, exitCode: exit });
    if (exit === 3) expect(f.details.retryable).toBe(false);
    done(id);
  });

  it.each([
    ['mcp/unknown-method', 'mcp_error', 3],
    ['mcp/batch', 'mcp_protocol_error', 3],
    ['mcp/parse-error', 'parse_error', 3],
    ['mcp/headers/accept', 'invalid_accept_header', 3],
    ['mcp/headers/content-type', 'invalid_content_type', 3],
    ['mcp/headers/protocol-version', 'unsupported_protocol_version', 3],
    ['mcp/body/too-large', 'request_too_large', 3],
    ['mcp/auth/missing', 'invalid_agent_credential', 6],
    ['mcp/auth/unknown-key', 'invalid_agent_credential', 6],
    ['mcp/auth/malformed', 'invalid_agent_credential', 6],
  ])('%s: a JSON-RPC or HTTP refusal → %s (exit %i)', async (id, code, exit) => {
    connectThen(rec(id));
    const m = mcp();
    const f = await failure(m.tool('rateloop_get_agent_context'));
    await m.close();
    expect(f).toMatchObject({ code, exitCode: exit });
    // 401: the scopes the WWW-Authenticate challenge asks for are named.
    if (exit === 6) expect(f.details.scopes).toEqual(['connection:claim', 'context:read', 'evaluation:read', 'review:decide']);
    done(id);
  });

  it('mcp/rate-limit/61st: Retry-After is waited for and the identical request sent again; a longer wait is reported (exit 3)', async () => {
    connectThen(rec('mcp/rate-limit/61st'), rec('mcp/get-agent-context'));
    const before = replay.requests.length;
    sleeps.length = 0;
    let m = mcp({ maxRetryAfterSeconds: 60 });
    expect(parseAgentContext(await m.tool('rateloop_get_agent_context')).workspaceId).toBe(meta.workspace.workspaceId);
    await m.close();
    expect(sleeps).toContain(45_000);
    const [first, again] = replay.requests.slice(before + 2);
    expect(again!.body).toBe(first!.body);
    connectThen(rec('mcp/rate-limit/61st'));
    m = mcp({ maxRetryAfterSeconds: 10 });
    const f = await failure(m.tool('rateloop_get_agent_context'));
    await m.close();
    expect(f).toMatchObject({ code: 'rate_limit_exceeded', exitCode: 3 });
    expect(f.details.retryAfterSeconds).toBe(45);
    done('mcp/rate-limit/61st');
  });

  it.each([
    'mcp/evaluate/a',
    'mcp/evaluate/b',
    'mcp/evaluate/c',
    'mcp/evaluate/d',
    'mcp/evaluate/e',
    'mcp/evaluate/f',
    'mcp/evaluate/replay',
  ])("%s: the envelope is this opportunity's, approval_required, not approval (exit 7)", async (id) => {
    connectThen(rec(id));
    const m = mcp();
    const doc = await m.tool(toolOf(id), argsOf(id));
    await m.close();
    const external = String(argsOf(id).externalOpportunityId);
    const env = parseEnvelope(doc, toolOf(id), expectedOpportunityId(meta.workspace.workspaceId, meta.workspace.agentId, external));
    expect(env).toMatchObject({ state: 'approval_required', decision: 'required', terminal: false, revision: 2 });
    expect(env.continuation?.cursor).toBe('2');
    const raw = parseReviewDecision(doc.rawResult);
    expect(raw.suggestionCommitment).toBe(argsOf(id).suggestionCommitment);
    if (byId(id).inputs) expect(sha(byId(id).inputs.suggestionPayload)).toBe(env.evaluationCommitment);
    const v = reviewVerdict(env, trust, env.evaluationCommitment);
    expect(v).toMatchObject({ approved: false, reason: 'not_terminal' });
    expect(await failure(Promise.resolve().then(() => settle({ envelope: env, verdict: v, cursor: null, result: null })))).toMatchObject({
      code: 'review_not_finished',
      exitCode: 7,
    });
    done(id);
  });

  it.each([
    ['mcp/envelope/pending', 'pending', false, 'not_terminal', 'review_not_finished'],
    ['mcp/envelope/completed', 'completed', true, 'approved', undefined],
    ['mcp/envelope/inconclusive', 'inconclusive', false, 'not_authorized', 'review_not_approved'],
    ['mcp/envelope/failed_terminal', 'failed_terminal', false, 'not_authorized', 'review_not_approved'],
    ['mcp/envelope/cancelled_before_commit', 'cancelled_before_commit', false, 'not_authorized', 'review_not_approved'],
  ] as const)('%s: state %s, approved %s (%s)', async (id, state, approved, reason, code) => {
    connectThen(rec(id));
    const m = mcp();
    const doc = await m.tool(toolOf(id), argsOf(id));
    await m.close();
    const external = String(argsOf(id).externalOpportunityId);
    const env = parseEnvelope(doc, toolOf(id), expectedOpportunityId(meta.workspace.workspaceId, meta.workspace.agentId, external));
    const output = suggestionOf(external);
    expect(output, 'the evaluate case of this opportunity holds its exact suggestion').toBeDefined();
    const v = reviewVerdict(env, trust, sha(output!));
    expect(v).toMatchObject({ state, approved, reason });
    if (env.terminal) expect(v.evidence).toBe('verified');
    const f = { envelope: env, verdict: v, cursor: null, result: null };
    if (code) expect(await failure(Promise.resolve().then(() => settle(f)))).toMatchObject({ code, exitCode: 7, details: { state } });
    else expect(() => settle(f)).not.toThrow();
    if (env.terminal) {
      // The same evidence without a pinned key, for another output, or with a forged signature is never approval.
      expect(reviewVerdict(env, undefined, sha(output!))).toMatchObject({ approved: false, reason: 'no_gate_key' });
      expect(reviewVerdict(env, trust, undefined)).toMatchObject({ approved: false, reason: 'no_local_output' });
      expect(await failure(Promise.resolve().then(() => reviewVerdict(env, trust, sha('another output'))))).toMatchObject({
        code: 'output_mismatch',
        exitCode: 5,
      });
      const forged = structuredClone(doc);
      forged.terminalEvidence.payload.releaseDisposition = approved ? 'not_authorized' : 'authorized_positive';
      expect(
        await failure(Promise.resolve().then(() => reviewVerdict(parseEnvelope(forged, toolOf(id)), trust, sha(output!)))),
      ).toMatchObject({ code: 'gate_signature_invalid', exitCode: 8 });
    }
    done(id);
  });

  it('mcp/list-open-reviews: two pages through nextCursor, each item with its next action', async () => {
    const { listOpenReviews } = await import('../src/review/invited.js');
    connectThen(rec('mcp/list-open-reviews/page-1'), rec('mcp/list-open-reviews/page-2'));
    const m = mcp();
    // --all stops only at a null nextCursor: the recorded second page still has one, so the limit of this replay
    // is two pages (a third answer is not queued).
    const page1 = await listOpenReviews(m, { limit: '2' });
    expect(page1.items.map((i) => i.state)).toEqual(['approval_required', 'approval_required']);
    expect(page1.nextCursor).toBe(
      rec('mcp/list-open-reviews/page-1').body && (rec('mcp/list-open-reviews/page-1').body as any).result.structuredContent.nextCursor,
    );
    const page2 = await listOpenReviews(m, { limit: '2', cursor: page1.nextCursor! });
    await m.close();
    expect(page2.items).toHaveLength(2);
    expect(JSON.parse(replay.requests[replay.requests.length - 1]!.body).params.arguments.cursor).toBe(page1.nextCursor);
    done('mcp/list-open-reviews/page-1');
    done('mcp/list-open-reviews/page-2');
  });

  it("mcp/get-assurance-state: the scope's stage and review rate", async () => {
    connectThen(rec('mcp/get-assurance-state'));
    const m = mcp();
    const scopeId = String(argsOf('mcp/get-assurance-state').scopeId);
    const s = parseAssuranceState(await m.tool('rateloop_get_assurance_state', { scopeId }), scopeId);
    await m.close();
    expect(s).toEqual({ scopeId, stage: 'calibrating', reviewRateBps: 10000 });
    done('mcp/get-assurance-state');
  });
});

describe('assurance HTTP answers', () => {
  const http = (id: string) => {
    replay.queue(rec(id));
    return assurance();
  };

  it.each(['assurance-review/post', 'assurance-review/post-replay', 'assurance-review/post-bound-ids'])(
    '%s: the raw decision (no envelope)',
    async (id) => {
      const d = parseReviewDecision(await http(id).reviewDecision(byId(id).request.body));
      expect(d).toMatchObject({
        decision: 'required',
        state: 'approval_required',
        suggestionCommitment: byId(id).request.body.suggestionCommitment,
      });
      done(id);
    },
  );

  it('assurance-review/get: the assurance state over HTTP', async () => {
    const s = parseAssuranceState(
      await http('assurance-review/get').assuranceState('evs_683b1fc3e0ce6052ae8ba83ffd48280965814118'),
      'evs_683b1fc3e0ce6052ae8ba83ffd48280965814118',
    );
    expect(s.stage).toBe('calibrating');
    done('assurance-review/get');
  });

  it('assurance-projects: lists, creates and a project with its runs', async () => {
    expect((await http('assurance-projects/list-empty').listProjects()).projects).toEqual([]);
    for (const id of ['assurance-projects/create-1', 'assurance-projects/create-2', 'assurance-projects/create-repeat']) {
      expect(parseProjectCreated(await http(id).createProject(byId(id).request.body))).toEqual({
        projectId: rec(id).body && (rec(id).body as any).projectId,
        workspaceId: meta.workspace.workspaceId,
      });
      done(id);
    }
    const list = await http('assurance-projects/list').listProjects();
    expect(list.workspaceId).toBe(meta.workspace.workspaceId);
    expect(list.projects.map((p) => p.name)).toEqual(['Support reply quality', 'Public FAQ answers', 'Support reply quality']);
    const id = 'hap_42d935c016f44c96b1496b9995ef1de6';
    expect(parseProject(await http('assurance-project/get').getProject(id), id).runs).toEqual([]);
    done('assurance-projects/list-empty');
    done('assurance-projects/list');
    done('assurance-project/get');
  });

  it.each([
    ['assurance-review/post-wrong-agent', 'reviewDecision', 'human_review_integration_binding_mismatch', 3],
    ['assurance-review/post-unknown-field', 'reviewDecision', 'invalid_review_opportunity', 3],
    ['assurance-review/post-invalid-json', 'reviewDecision', 'invalid_review_opportunity', 3],
    ['assurance-review/get-missing-scope', 'assuranceState', 'invalid_assurance_state_query', 3],
    ['assurance-review/get-no-key', 'assuranceState', 'workspace_api_key_required', 6],
    ['assurance-review/get-unbound-key', 'assuranceState', 'agent_integration_inactive', 6],
    ['assurance-review/post-narrow-key', 'reviewDecision', 'insufficient_scope', 6],
    ['assurance-projects/create-restricted', 'createProject', 'credential_classification_forbidden', 6],
    ['assurance-projects/create-unknown-field', 'createProject', 'invalid_human_assurance_input', 3],
    ['assurance-projects/create-public-unconfirmed', 'createProject', 'invalid_human_assurance_input', 3],
    ['assurance-projects/create-invalid-json', 'createProject', 'invalid_human_assurance_input', 3],
    ['assurance-projects/create-too-large', 'createProject', 'request_too_large', 3],
    ['assurance-projects/create-narrow-key', 'createProject', 'insufficient_scope', 6],
    ['assurance-projects/list-no-key', 'listProjects', 'workspace_api_key_required', 6],
    ['assurance-projects/list-unknown-key', 'listProjects', 'invalid_api_key', 6],
    ['assurance-projects/list-oauth-token', 'listProjects', 'invalid_api_key', 6],
    ['assurance-projects/list-narrow-key', 'listProjects', 'insufficient_scope', 6],
    ['assurance-project/get-unknown', 'getProject', 'unknown_project', 2],
    ['assurance-run/get-unknown', 'runStatus', 'unknown_run', 2],
    ['private-reviews/no-key', 'createPrivateReview', 'workspace_api_key_required', 6],
    ['private-reviews/narrow-key', 'createPrivateReview', 'insufficient_scope', 6],
    ['private-reviews/invalid-json', 'createPrivateReview', 'invalid_json', 3],
    ['private-reviews/idempotency-header-mismatch', 'createPrivateReview', 'invalid_idempotency_key', 3],
    ['private-reviews/idempotency-header-missing', 'createPrivateReview', 'invalid_idempotency_key', 3],
    ['private-reviews/bad-idempotency-key', 'createPrivateReview', 'invalid_human_assurance_input', 3],
    ['private-reviews/non-canonical-base64', 'createPrivateReview', 'invalid_human_assurance_input', 3],
    ['private-reviews/too-large', 'createPrivateReview', 'request_too_large', 3],
    ['private-reviews/plain-key-not-integration', 'createPrivateReview', 'private_review_integration_binding_mismatch', 6],
    ['private-reviews/no-private-routing', 'createPrivateReview', 'unknown_project', 2],
  ] as const)('%s: %s → %s (exit %i)', async (id, method, code, exit) => {
    const c = byId(id);
    const client = http(id) as any;
    const arg =
      method === 'listProjects'
        ? undefined
        : method === 'getProject'
          ? c.request.path.split('/').pop()
          : method === 'runStatus'
            ? 'hau_missing'
            : method === 'assuranceState'
              ? 'evs_x'
              : (c.request.body ?? {});
    const f = await failure(client[method](arg));
    expect(f).toMatchObject({ code, exitCode: exit });
    if (code === 'insufficient_scope') expect(f.details.scope).toBe(/lacks ([a-z]+:[a-z]+)/.exec((rec(id).body as any).message)![1]);
    // A tokenless error without `retryable` counts as not retryable (review.md §3.1), and nothing was retried.
    expect(replay.pending()).toBe(0);
    done(id);
  });

  it('the run status parser (no 200 run status is in the corpus; its README says why)', () => {
    expect(() =>
      parseRunStatus(
        {
          schemaVersion: 'rateloop.human-assurance.v2',
          runId: 'hau_x',
          runStatus: 'collecting',
          responses: { baseline: 1, candidate: 1, tie: 0, valid: 3 },
        },
        'hau_x',
      ),
    ).toThrow(/do not add up/);
  });
});

describe('coverage', () => {
  it('every recorded response was read by loopsign', () => {
    const missing = cases.map((c) => c.id).filter((id) => !covered.has(id));
    expect(missing).toEqual([]);
  });
});
