// The sandbox's invited-review surface on the service port: the assurance routes /api/agent/v1/assurance/…
// (tokenless envelope, rlk_ keys, 64 KiB bodies, no rate limit) and the workspace MCP endpoint /api/agent/v1/mcp
// (its header checks in the service's order, 60 requests per UTC minute per client, JSON-RPC on the official SDK's
// server, review tools answering with the review envelope in structuredContent). Shapes follow the live corpus.
import { createHash } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { jsonRpcError, negotiated } from './mcp.js';
import type { Hostile, HostileScenario } from './hostile.js';
import type { SandboxEvidence } from './evidence.js';
import { ALL_SCOPES } from './review-fixtures.js';
import { WsError, type Principal, type ReviewWorkspace } from './review-workspace.js';
import { REVIEW_TOOLS, PAIRING_TOOLS, INSTRUCTIONS } from './review-tools.js';

export const REVIEW_SCENARIOS: HostileScenario[] = [
  { name: 'review_binding_other_project', flow: 'review', description: 'the private review answer binds it to another project' },
  {
    name: 'review_binding_other_profile',
    flow: 'review',
    description: 'a review answer (private review, or the envelope of a review tool) names another request profile',
  },
  {
    name: 'review_result_other_opportunity',
    flow: 'review',
    description: 'rateloop_get_review_result answers with the result of another opportunity',
  },
  {
    name: 'review_evidence_other_run',
    flow: 'review',
    description: 'the run evidence route answers with the (validly signed) packet of another run',
  },
];

type Obj = Record<string, any>;
const BODY_CAP = 65_536;
const ASSURANCE_HEADERS = { 'cache-control': 'private, no-store, max-age=0' };
const MCP_HEADERS = {
  'cache-control': 'private, no-store, max-age=0',
  'content-type': 'application/json; charset=utf-8',
  vary: 'Origin, Accept, Authorization, MCP-Protocol-Version, MCP-Session-Id',
  'x-content-type-options': 'nosniff',
};
const API_KEY = /^rlk_[a-f0-9]{16}_[A-Za-z0-9_-]{32,128}$/;
const PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'];
/** What the service assumes when a request carries no MCP-Protocol-Version (the spec's rule for older clients). */
const COMPAT_PROTOCOL_VERSION = '2025-03-26';

/** A media-type list header as the service reads it: the types, without parameters, in lower case. */
const mediaTypes = (header: string | undefined) => (header ?? '').split(',').map((v) => v.split(';', 1)[0]!.trim().toLowerCase());
const SCOPES_CHALLENGE = 'connection:claim context:read evaluation:read review:decide';

function tokenless(c: Context, e: WsError, withRetryable = true): Response {
  const body = withRetryable ? e.body() : { code: e.code, message: e.message };
  return new Response(JSON.stringify(body), { status: e.status, headers: { ...ASSURANCE_HEADERS, 'content-type': 'application/json' } });
}

function ok(body: Obj, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...ASSURANCE_HEADERS, 'content-type': 'application/json' } });
}

function bearer(c: Context): string | undefined {
  const m = /^bearer +(.+)$/i.exec(c.req.header('authorization') ?? '');
  return m?.[1]?.trim();
}

async function boundedText(c: Context): Promise<string> {
  const declared = c.req.header('content-length');
  if (declared !== undefined && (!/^[0-9]+$/.test(declared) || !Number.isSafeInteger(Number(declared))))
    throw new WsError(400, 'invalid_content_length', 'Content-Length is invalid.');
  if (declared !== undefined && Number(declared) > BODY_CAP) throw new WsError(413, 'request_too_large', 'Request body exceeds 64 KiB.');
  const buf = Buffer.from(await c.req.arrayBuffer());
  if (buf.length > BODY_CAP) throw new WsError(413, 'request_too_large', 'Request body exceeds 64 KiB.');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(buf);
  } catch {
    return '\u0000invalid';
  }
}

const fields = (v: unknown, allowed: string[]) =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).every((k) => allowed.includes(k));
const CLASSIFICATIONS = ['public', 'internal', 'confidential', 'restricted', 'regulated'];
const B64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const MEDIA = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(?:\s*;.*)?$/;
const invalid = (path: string, expected: string) =>
  new WsError(400, 'invalid_human_assurance_input', `Invalid human-assurance API value at ${path}: expected ${expected}.`);

function checkProjectBody(b: Obj): void {
  if (
    !fields(b, [
      'name',
      'description',
      'dataClassification',
      'visibility',
      'publicMaterialKind',
      'confirmedNoSensitiveData',
      'retentionDays',
    ])
  )
    throw invalid(
      'project',
      'only name, description, dataClassification, visibility, publicMaterialKind, confirmedNoSensitiveData, retentionDays',
    );
  if (typeof b.name !== 'string' || !b.name.trim() || b.name.trim().length > 160)
    throw invalid('project.name', 'a non-empty name of at most 160 characters');
  if (!CLASSIFICATIONS.includes(b.dataClassification)) throw invalid('project.dataClassification', 'a data classification');
  if (!Number.isSafeInteger(b.retentionDays) || b.retentionDays < 1 || b.retentionDays > 3650)
    throw invalid('project.retentionDays', 'an integer from 1 to 3650');
  const pub = b.visibility === 'public';
  if (
    pub
      ? b.dataClassification !== 'public' ||
        !['public', 'synthetic', 'redacted'].includes(b.publicMaterialKind) ||
        b.confirmedNoSensitiveData !== true
      : b.publicMaterialKind !== undefined ||
        b.confirmedNoSensitiveData !== undefined ||
        (b.visibility !== undefined && b.visibility !== 'private')
  ) {
    throw invalid(
      'project',
      'public visibility with dataClassification public, an explicit publicMaterialKind, and confirmedNoSensitiveData true, or a private project',
    );
  }
}

function checkPrivateReviewBody(b: Obj): void {
  if (
    !fields(b, ['idempotencyKey', 'integrationId', 'projectId', 'requestProfile', 'cohortId', 'dataClassification', 'source', 'suggestion'])
  )
    throw invalid('privateReview', 'only the documented private review fields');
  if (typeof b.idempotencyKey !== 'string' || !/^[A-Za-z0-9._:-]{8,160}$/.test(b.idempotencyKey.trim()))
    throw invalid('privateReview.idempotencyKey', '8-160 safe idempotency characters');
  for (const f of ['integrationId', 'projectId', 'cohortId'])
    if (typeof b[f] !== 'string' || !b[f].trim()) throw invalid(`privateReview.${f}`, 'a non-empty string');
  const rp = b.requestProfile;
  if (
    !fields(rp, ['id', 'version', 'hash']) ||
    typeof rp.id !== 'string' ||
    !Number.isSafeInteger(rp.version) ||
    rp.version < 1 ||
    !/^sha256:[0-9a-f]{64}$/.test(rp.hash)
  )
    throw invalid('privateReview.requestProfile', 'an exact request profile reference');
  if (!['internal', 'confidential', 'restricted', 'regulated'].includes(b.dataClassification))
    throw invalid('privateReview.dataClassification', 'a private data classification');
  for (const f of ['source', 'suggestion']) {
    const a = b[f];
    if (!fields(a, ['contentType', 'bytesBase64']) || typeof a.contentType !== 'string' || !MEDIA.test(a.contentType))
      throw invalid(`privateReview.${f}.contentType`, 'a valid media type');
    const t = typeof a.bytesBase64 === 'string' ? a.bytesBase64.trim() : '';
    if (!t || !B64.test(t) || Buffer.from(t, 'base64').toString('base64') !== t)
      throw invalid(`privateReview.${f}.bytesBase64`, '1 byte to 10 MB of canonical base64');
    a.contentType = a.contentType.split(';')[0]!.trim().toLowerCase();
  }
}

export interface ReviewRoutesOptions {
  ws: ReviewWorkspace;
  hostile: Hostile;
  evidence: SandboxEvidence;
  /** Calls per tool, for the sandbox's audit chain. */
  onCall?: (name: string) => void;
}

/** Fixed UTC-minute windows per client identity (review.md §4). */
class McpLimiter {
  private readonly counts = new Map<string, number>();
  limit = 60;
  /** The service's window is the UTC minute; a test control may shorten it. */
  windowSeconds = 60;
  hit(identity: string): number {
    const now = Math.floor(Date.now() / 1000);
    const start = now - (now % this.windowSeconds);
    const key = `${start}\0${identity}`;
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    if (this.counts.size > 10_000) this.counts.clear();
    return n > this.limit ? Math.max(1, start + this.windowSeconds - now) : 0;
  }

  clear(): void {
    this.counts.clear();
  }
}

export class ReviewRoutes {
  readonly limiter = new McpLimiter();

  constructor(private readonly o: ReviewRoutesOptions) {
    o.hostile.register(REVIEW_SCENARIOS);
  }

  private principal(key: string | undefined): Principal | undefined {
    return key ? this.o.ws.keys.get(key) : undefined;
  }

  private assuranceAuth(c: Context): Principal {
    const key = bearer(c);
    if (!key) throw new WsError(401, 'workspace_api_key_required', 'A workspace API key is required for the assurance integration API.');
    const p = this.principal(key);
    if (!API_KEY.test(key) || !p || p.kind === 'pairing') throw new WsError(401, 'invalid_api_key', 'Invalid API key.');
    return p;
  }

  routes(): Hono {
    const app = new Hono();
    const ws = this.o.ws;
    const route = (fn: (c: Context) => Promise<Response> | Response) => async (c: Context) => {
      try {
        return await fn(c);
      } catch (error) {
        if (error instanceof WsError) return tokenless(c, error);
        return tokenless(c, new WsError(500, 'internal_error', 'Tokenless API request failed.'));
      }
    };
    const json = async (c: Context, onInvalid: WsError): Promise<Obj> => {
      const text = await boundedText(c);
      try {
        const v = JSON.parse(text);
        if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
        return v;
      } catch {
        throw onInvalid;
      }
    };

    app.get(
      '/api/agent/v1/assurance/projects',
      route((c) => {
        const p = this.assuranceAuth(c);
        ws.requireScope(p, 'evaluation:read');
        // Newest first, as the service lists them; within one second (the times are whole seconds), the one made later
        // first: a list must not change its order with where a second boundary fell between two creations.
        const made = [...ws.projects.values()];
        const projects = made
          .filter((x) => x.holders.has(p.key))
          .sort((a, b) => b.updatedAt - a.updatedAt || made.indexOf(b) - made.indexOf(a));
        return ok({
          schemaVersion: 'rateloop.human-assurance.v2',
          workspaceId: ws.workspaceId,
          projects: projects.map((x) => ({
            projectId: x.projectId,
            name: x.name,
            ...(x.description ? { description: x.description } : {}),
            dataClassification: x.dataClassification,
            status: 'active',
            retentionDays: x.retentionDays,
            suiteCount: 0,
            runCount: (ws.project(p, x.projectId).runs as Obj[]).length,
            createdAt: new Date(x.createdAt * 1000).toISOString(),
            updatedAt: new Date(x.updatedAt * 1000).toISOString(),
          })),
        });
      }),
    );
    app.post(
      '/api/agent/v1/assurance/projects',
      route(async (c) => {
        const p = this.assuranceAuth(c);
        ws.requireScope(p, 'panel:publish');
        const b = await json(c, new WsError(400, 'invalid_human_assurance_input', 'Project body must be valid JSON.'));
        checkProjectBody(b);
        if (b.dataClassification === 'restricted' || b.dataClassification === 'regulated')
          throw new WsError(403, 'credential_classification_forbidden', 'Credential classification does not permit this request.');
        const t = ws.now();
        // Not idempotent, as the service: every accepted request makes a new project.
        const projectId = `hap_${crypto.randomUUID().replaceAll('-', '')}`;
        ws.projects.set(projectId, {
          projectId,
          name: b.name.trim(),
          ...(b.description ? { description: String(b.description).trim() } : {}),
          dataClassification: b.dataClassification,
          retentionDays: b.retentionDays,
          createdAt: t,
          updatedAt: t,
          holders: new Set([p.key]),
        });
        return ok({ schemaVersion: 'rateloop.human-assurance.v2', projectId, workspaceId: ws.workspaceId }, 201);
      }),
    );
    app.get(
      '/api/agent/v1/assurance/projects/:projectId',
      route((c) => {
        const p = this.assuranceAuth(c);
        ws.requireScope(p, 'evaluation:read');
        return ok(ws.project(p, c.req.param('projectId')!));
      }),
    );
    app.get(
      '/api/agent/v1/assurance/runs/:runId',
      route((c) => {
        const p = this.assuranceAuth(c);
        ws.requireScope(p, 'evaluation:read');
        return ok(ws.runStatus(p, c.req.param('runId')!));
      }),
    );
    app.post(
      '/api/agent/v1/assurance/private-reviews',
      route(async (c) => {
        const p = this.assuranceAuth(c);
        ws.requireScope(p, 'panel:publish');
        let b: Obj;
        try {
          b = await json(c, new WsError(400, 'invalid_json', 'Request body must be valid JSON.'));
        } catch (error) {
          // This route writes its invalid-JSON answer itself, without `retryable` (review.md §3.1).
          if (error instanceof WsError && error.code === 'invalid_json') return tokenless(c, error, false);
          throw error;
        }
        checkPrivateReviewBody(b);
        if ((c.req.header('idempotency-key') ?? '').trim() !== b.idempotencyKey.trim())
          return tokenless(
            c,
            new WsError(400, 'invalid_idempotency_key', 'Idempotency-Key must exactly match the private review request.'),
            false,
          );
        b.idempotencyKey = b.idempotencyKey.trim();
        const response = structuredClone(ws.createPrivateReview(p, b));
        this.tamper(response.bindings);
        return ok(response, 201);
      }),
    );
    app.on(
      ['GET', 'POST'],
      '/api/agent/v1/assurance/review',
      route(async (c) => {
        const key = bearer(c);
        if (!key || !API_KEY.test(key)) throw new WsError(401, 'workspace_api_key_required', 'A workspace API key is required.');
        const p = this.principal(key);
        if (!p || p.kind !== 'integration') throw new WsError(401, 'agent_integration_inactive', 'Agent integration is inactive.');
        if (c.req.method === 'GET') {
          ws.requireScope(p, 'evaluation:read');
          const scopeId = c.req.query('scopeId');
          if (!scopeId) throw new WsError(400, 'invalid_assurance_state_query', 'scopeId is required.');
          if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,159}$/.test(scopeId))
            throw new WsError(400, 'invalid_review_opportunity', 'scopeId is invalid.');
          return ok(ws.assuranceState(scopeId));
        }
        ws.requireScope(p, 'review:decide');
        const b = await json(c, new WsError(400, 'invalid_review_opportunity', 'Review opportunity body must be valid JSON.'));
        if (!fields(b, [...EVALUATE_KEYS, 'agentId', 'agentVersionId', 'policyId', 'policyVersion']))
          throw new WsError(400, 'invalid_review_opportunity', 'Review opportunity body contains unknown fields.');
        const bound: Obj = {
          agentId: ws.fixture.agentId,
          agentVersionId: ws.fixture.agentVersionId,
          policyId: ws.fixture.policyId,
          policyVersion: 1,
        };
        for (const [k, v] of Object.entries(bound)) {
          if (b[k] !== undefined && b[k] !== v)
            throw new WsError(
              409,
              'human_review_integration_binding_mismatch',
              'The agent connection is not bound to this exact human-review configuration.',
            );
          delete b[k];
        }
        return ok(ws.evaluate(b).rawResult, 201);
      }),
    );

    // The workspace MCP endpoint.
    app.on(['GET', 'DELETE'], '/api/agent/v1/mcp', (c) => this.mcpSession(c));
    app.options(
      '/api/agent/v1/mcp',
      () =>
        new Response(null, {
          status: 204,
          headers: {
            'Access-Control-Allow-Headers': 'Accept, Authorization, Content-Type, MCP-Protocol-Version, MCP-Session-Id',
            'Access-Control-Allow-Methods': 'DELETE, GET, POST, OPTIONS',
          },
        }),
    );
    app.post('/api/agent/v1/mcp', (c) => this.mcp(c));

    // Test control: what the owner configured in the service's interface (no API route shows it, review.md §6.2).
    app.get('/__sandbox/workspace', (c) =>
      c.json({
        workspaceId: ws.workspaceId,
        projectId: ws.projectId,
        integrationId: ws.fixture.integrationId,
        requestProfile: { id: ws.fixture.profile.id, version: ws.fixture.profile.version, hash: ws.fixture.profile.hash },
        cohortId: ws.fixture.cohortId,
        workflowKey: ws.fixture.workflowKey,
      }),
    );
    // Test control: another key of the workspace (a pairing key, a plain key without an integration, fewer scopes).
    app.post('/__sandbox/workspace/keys', async (c) => {
      const b = (await c.req.json().catch(() => ({}))) as Obj;
      const kind = ['integration', 'pairing', 'plain'].includes(b.kind) ? b.kind : 'plain';
      const scopes = Array.isArray(b.scopes) ? b.scopes.filter((x: unknown) => (ALL_SCOPES as unknown[]).includes(x)) : ALL_SCOPES;
      const key = ws.mintKey(kind, scopes);
      // A plain key holds the sandbox project too, as a member's key would.
      if (kind !== 'pairing' && b.project !== false) ws.projects.get(ws.projectId)!.holders.add(key);
      return c.json({ key, kind, scopes });
    });

    // Hostile: the evidence route answers with another run's packet.
    app.use('/api/account/workspaces/:ws/assurance/runs/:runId/evidence', async (c, next) => {
      await next();
      if (c.res.status !== 200 || !this.o.hostile.take('review_evidence_other_run')) return;
      const runs = await this.o.evidence.allRuns();
      const other = runs.find((r) => r.runId !== c.req.param('runId'));
      if (other)
        c.res = new Response(JSON.stringify(await this.o.evidence.packet(other.runId)), {
          status: 200,
          headers: { 'content-type': 'application/json', 'cache-control': 'private, no-store' },
        });
    });
    return app;
  }

  /** Hostile bindings: another project or request profile in an answer that carries bindings. */
  private tamper(bindings: Obj | undefined): void {
    if (!bindings) return;
    if (this.o.hostile.take('review_binding_other_project'))
      bindings.project = { ...bindings.project, projectId: `hap_${crypto.randomUUID().replaceAll('-', '')}` };
    if (this.o.hostile.take('review_binding_other_profile'))
      bindings.requestProfile = { ...bindings.requestProfile, hash: `sha256:${'e'.repeat(64)}` };
  }

  private mcpError(
    c: Context,
    status: number,
    code: number,
    message: string,
    dataCode?: string,
    headers: Record<string, string> = {},
  ): Response {
    return new Response(JSON.stringify(jsonRpcError(null, code, message, dataCode ? { code: dataCode } : undefined)), {
      status,
      headers: { ...MCP_HEADERS, ...headers },
    });
  }

  private identity(c: Context): string {
    const first = (h: string | undefined) => h?.split(',')[0]?.trim() || undefined;
    return (
      first(c.req.header('x-vercel-forwarded-for')) ??
      c.req.header('x-real-ip') ??
      first(c.req.header('x-forwarded-for')) ??
      bearer(c) ??
      'anonymous'
    );
  }

  /** The version a request speaks: its header, trimmed, or the older clients' default; undefined when unsupported. */
  private protocolVersion(c: Context): string | undefined {
    const version = c.req.header('mcp-protocol-version')?.trim() || COMPAT_PROTOCOL_VERSION;
    return PROTOCOL_VERSIONS.includes(version) ? version : undefined;
  }

  private originForbidden(c: Context): boolean {
    const origin = c.req.header('origin');
    return origin !== undefined && origin !== new URL(c.req.url).origin;
  }

  /** The rate limit, then the credential: what every method checks after its own header rules. */
  private admit(c: Context): Principal | Response {
    const wait = this.limiter.hit(this.identity(c));
    if (wait > 0) return this.mcpError(c, 429, -32000, 'MCP rate limit exceeded.', 'rate_limit_exceeded', { 'retry-after': String(wait) });
    const p = this.principal(bearer(c));
    if (!p || p.kind === 'plain') {
      return this.mcpError(c, 401, -32000, 'Invalid agent credential.', 'invalid_agent_credential', {
        'www-authenticate': `Bearer resource_metadata="${new URL(c.req.url).origin}/.well-known/oauth-protected-resource/api/agent/v1/mcp", scope="${SCOPES_CHALLENGE}"`,
      });
    }
    return p;
  }

  /**
   * GET (the event stream for elicitations) and DELETE (ending a session), in the service's order of checks: Origin,
   * protocol version, (GET) Accept, the session id, rate limit, credential. The service keeps sessions only for OAuth
   * connections, which the sandbox does not model, so a key that passes every check is still told the session is
   * unavailable. The service answers 400 here, not the 405 the spec gives a server without a stream, and so does this.
   */
  private mcpSession(c: Context): Response {
    if (this.originForbidden(c)) return this.mcpError(c, 403, -32000, 'Origin is not allowed.', 'origin_forbidden');
    if (!this.protocolVersion(c)) return this.mcpError(c, 400, -32000, 'Unsupported MCP protocol version.', 'unsupported_protocol_version');
    if (c.req.method === 'GET' && !mediaTypes(c.req.header('accept')).includes('text/event-stream'))
      return this.mcpError(c, 406, -32000, 'Accept must include text/event-stream.', 'invalid_accept_header');
    if (!c.req.header('mcp-session-id')?.trim())
      return this.mcpError(c, 400, -32000, 'MCP-Session-Id is required.', 'mcp_session_required');
    const p = this.admit(c);
    if (p instanceof Response) return p;
    return this.mcpError(c, 400, -32000, 'MCP session is unavailable.', 'mcp_session_required');
  }

  /** POST: the service's order of checks (review.md §5.1): Origin, headers, rate limit, authentication, body, dispatch. */
  private async mcp(c: Context): Promise<Response> {
    if (this.originForbidden(c)) return this.mcpError(c, 403, -32000, 'Origin is not allowed.', 'origin_forbidden');
    if (mediaTypes(c.req.header('content-type'))[0] !== 'application/json')
      return this.mcpError(c, 415, -32000, 'Content-Type must be application/json.', 'invalid_content_type');
    const accept = mediaTypes(c.req.header('accept'));
    if (!accept.includes('application/json') || !accept.includes('text/event-stream'))
      return this.mcpError(c, 406, -32000, 'Accept must include application/json and text/event-stream.', 'invalid_accept_header');
    const version = this.protocolVersion(c);
    if (!version) return this.mcpError(c, 400, -32000, 'Unsupported MCP protocol version.', 'unsupported_protocol_version');
    const p = this.admit(c);
    if (p instanceof Response) return p;
    let text: string;
    try {
      text = await boundedText(c);
    } catch (error) {
      if (error instanceof WsError && error.status === 413)
        return this.mcpError(c, 413, -32000, 'MCP request body exceeds 64 KiB.', 'request_too_large');
      throw error;
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return this.mcpError(c, 400, -32700, 'Parse error', 'parse_error');
    }
    if (
      body === null ||
      typeof body !== 'object' ||
      Array.isArray(body) ||
      (body as Obj).jsonrpc !== '2.0' ||
      typeof (body as Obj).method !== 'string'
    ) {
      return new Response(JSON.stringify(jsonRpcError(null, -32600, 'Invalid Request')), { status: 200, headers: MCP_HEADERS });
    }
    const rpc = body as Obj;
    if (!('id' in rpc)) return new Response(null, { status: 202, headers: { 'cache-control': 'no-store' } });
    if (rpc.id === null || (typeof rpc.id !== 'string' && typeof rpc.id !== 'number'))
      return new Response(JSON.stringify(jsonRpcError(null, -32600, 'Invalid Request')), { status: 200, headers: MCP_HEADERS });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = this.server(p);
    await server.connect(transport);
    try {
      const headers = new Headers(c.req.raw.headers);
      headers.set('accept', 'application/json, text/event-stream');
      headers.set('mcp-protocol-version', version);
      const res = await transport.handleRequest(new Request(c.req.url, { method: 'POST', headers, body: text }), {
        parsedBody: negotiated(body, PROTOCOL_VERSIONS, PROTOCOL_VERSIONS[0]!),
      });
      return new Response(await res.text(), { status: res.status, headers: MCP_HEADERS });
    } finally {
      void server.close();
    }
  }

  private server(p: Principal): Server {
    const pairing = p.kind === 'pairing';
    const server = new Server(
      { name: 'rateloop-tokenless-workspace', version: '1.2.0' },
      { capabilities: { tools: {} }, instructions: pairing ? INSTRUCTIONS.pairing : INSTRUCTIONS.integration },
    );
    const tools = pairing ? PAIRING_TOOLS : REVIEW_TOOLS;
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools as never }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const name = request.params.name;
      const callable = pairing
        ? ['rateloop_register_agent', 'rateloop_get_registration_status']
        : [...REVIEW_TOOLS.map((t) => t.name), 'rateloop_get_registration_status'];
      if (!callable.includes(name)) throw Object.assign(new Error('Unknown RateLoop workspace tool.'), { code: -32602 });
      const args = (request.params.arguments ?? {}) as Obj;
      try {
        const { raw, structured } = await this.call(p, name, args);
        this.o.onCall?.(name);
        return { content: [{ type: 'text', text: JSON.stringify(raw) }], structuredContent: structured };
      } catch (error) {
        const e = error instanceof WsError ? error : new WsError(500, 'internal_error', 'RateLoop workspace MCP request failed.');
        return { content: [{ type: 'text', text: JSON.stringify(e.body()) }], structuredContent: e.body(), isError: true };
      }
    });
    return server;
  }

  private async call(p: Principal, name: string, args: Obj): Promise<{ raw: Obj; structured: Obj }> {
    const ws = this.o.ws;
    const same = (v: Obj) => ({ raw: v, structured: v });
    const envelope = (e: Obj) => ({ raw: e.rawResult, structured: e });
    const argsInvalid = (what: string) => new WsError(400, 'invalid_tool_arguments', `${what} arguments are invalid.`);
    switch (name) {
      case 'rateloop_register_agent': {
        if (
          !fields(args, [
            'externalId',
            'displayName',
            'description',
            'provider',
            'model',
            'modelVersion',
            'environment',
            'requestedWorkflowKeys',
          ])
        )
          throw new WsError(400, 'invalid_agent_registration', 'Agent registration is invalid.');
        p.registration = { ...args };
        return same(
          this.registration(
            p,
            'Call rateloop_get_registration_status while the workspace owner reviews this registration. After approval, refresh the MCP tool list and call rateloop_get_agent_context.',
          ),
        );
      }
      case 'rateloop_get_registration_status':
        if (p.kind === 'integration') {
          return same({
            registration: { status: 'approved' },
            integration: {
              integrationId: ws.fixture.integrationId,
              workspaceId: ws.workspaceId,
              agentId: ws.fixture.agentId,
              agentVersionId: ws.fixture.agentVersionId,
            },
            nextAction: 'Refresh the MCP tool list now, then call rateloop_get_agent_context and follow its bound policy.',
          });
        }
        return same(
          this.registration(
            p,
            'Keep checking registration status without exposing the credential. After approval, refresh the MCP tool list and call rateloop_get_agent_context.',
          ),
        );
      case 'rateloop_get_agent_context':
        if (Object.keys(args).length) throw argsInvalid('Agent context');
        return same(ws.agentContext(p));
      case 'rateloop_list_open_reviews': {
        if (!fields(args, ['cursor', 'limit'])) throw argsInvalid('Open-review');
        const limit = args.limit ?? 20;
        if (!Number.isSafeInteger(limit) || limit < 1 || limit > 50)
          throw new WsError(400, 'invalid_open_review_query', 'Open-review limit is invalid.');
        if (
          args.cursor !== undefined &&
          args.cursor !== null &&
          (typeof args.cursor !== 'string' || args.cursor.length < 1 || args.cursor.length > 1024)
        )
          throw new WsError(400, 'invalid_open_review_query', 'Open-review cursor is invalid.');
        return same(ws.openReviews(args.cursor ?? undefined, limit));
      }
      case 'rateloop_get_assurance_state':
        ws.requireScope(p, 'evaluation:read');
        if (!fields(args, ['scopeId']) || typeof args.scopeId !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._:-]{0,159}$/.test(args.scopeId))
          throw argsInvalid('Assurance state');
        return same(ws.assuranceState(args.scopeId));
      case 'rateloop_evaluate_review_requirement': {
        if (
          !fields(args, EVALUATE_KEYS) ||
          !EVALUATE_REQUIRED.every((k) => k in args) ||
          !fields(args.sourceEvidence, ['reference', 'hash'])
        )
          throw argsInvalid('Opportunity');
        ws.requireScope(p, 'review:decide');
        return envelope(this.tamperEnvelope(ws.evaluate(args)));
      }
      case 'rateloop_request_review': {
        if (
          !fields(args, ['opportunityId', 'sourcePayload', 'suggestionPayload', 'question', 'material']) ||
          typeof args.opportunityId !== 'string'
        )
          throw argsInvalid('Review request');
        ws.requireScope(p, 'panel:publish');
        for (const f of ['sourcePayload', 'suggestionPayload']) {
          if (typeof args[f] !== 'string' || args[f].length < 1) throw argsInvalid('Review request');
          if (args[f].length > 3000) throw new WsError(500, 'review_configuration_invalid', 'Review payload is too long.');
        }
        const e = structuredClone(ws.request(args, args.sourcePayload, args.suggestionPayload));
        this.tamper(e.foundation?.bindings);
        return envelope(this.tamperEnvelope(e));
      }
      case 'rateloop_wait_for_review': {
        if (!fields(args, ['opportunityId', 'cursor', 'timeoutMs']) || typeof args.opportunityId !== 'string')
          throw argsInvalid('Review wait');
        ws.requireScope(p, 'result:read');
        let op = ws.requireRequested(args.opportunityId);
        const timeoutMs = args.timeoutMs ?? 30_000;
        if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 60_000)
          throw new WsError(400, 'invalid_wait_timeout', 'timeoutMs must be between 1 and 60000.');
        const cursor = args.cursor ?? undefined;
        if (cursor !== undefined && (typeof cursor !== 'string' || !/^[0-9]{1,16}(?::[0-9]{1,16})?$/.test(cursor)))
          throw new WsError(400, 'invalid_wait_cursor', 'cursor is invalid.');
        // Long poll: until the review moves past the cursor (or has its result), or the timeout.
        const deadline = Date.now() + timeoutMs;
        while (!ws.changedSince(op, cursor) && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, Math.min(200, Math.max(1, deadline - Date.now()))));
          op = ws.requireRequested(args.opportunityId);
        }
        return envelope(this.tamperEnvelope(ws.waitEnvelope(op)));
      }
      case 'rateloop_get_review_result': {
        if (!fields(args, ['opportunityId']) || typeof args.opportunityId !== 'string') throw argsInvalid('Review result');
        ws.requireScope(p, 'result:read');
        const op = ws.requireRequested(args.opportunityId);
        const e = structuredClone(ws.resultEnvelope(op));
        if (this.o.hostile.take('review_result_other_opportunity')) {
          const other = ws.someOtherOpportunity(args.opportunityId);
          e.opportunityId = other;
          e.result.opportunityId = other;
          e.rawResult.opportunityId = other;
        }
        return envelope(this.tamperEnvelope(e));
      }
      default:
        throw new WsError(400, 'invalid_tool_arguments', 'Unknown tool.');
    }
  }

  private tamperEnvelope(e: Obj): Obj {
    if (e.frozen && this.o.hostile.take('review_binding_other_profile'))
      e.frozen.requestProfile = { ...e.frozen.requestProfile, hash: `sha256:${'e'.repeat(64)}` };
    return e;
  }

  private registration(p: Principal, nextAction: string): Obj {
    const r = p.registration ?? {};
    const t = new Date(this.o.ws.now() * 1000).toISOString();
    return {
      registration: {
        pairingId: `apr_${createHash('sha256').update(p.key).digest('hex').slice(0, 32)}`,
        workspaceId: this.o.ws.workspaceId,
        status: 'claimed',
        credentialPrefix: p.key.slice(0, 20),
        externalId: r.externalId ?? null,
        displayName: r.displayName ?? null,
        description: r.description ?? null,
        provider: r.provider ?? null,
        model: r.model ?? null,
        modelVersion: r.modelVersion ?? null,
        environment: r.environment ?? null,
        clientName: 'unknown',
        clientVersion: 'unknown',
        clientCapabilities: [],
        requestedWorkflowKeys: r.requestedWorkflowKeys ?? [],
        createdAt: t,
        expiresAt: new Date((this.o.ws.now() + 600) * 1000).toISOString(),
        claimedAt: t,
        approvedAt: null,
        rejectedAt: null,
      },
      nextAction,
      pollAfterMs: 3000,
    };
  }
}

const EVALUATE_KEYS = [
  'externalOpportunityId',
  'workflowKey',
  'riskTier',
  'audiencePolicyHash',
  'suggestionCommitment',
  'sourceEvidence',
  'declaredConfidenceBps',
  'criticalRisk',
  'metadataComplete',
  'execution',
];
const EVALUATE_REQUIRED = [
  'externalOpportunityId',
  'workflowKey',
  'riskTier',
  'audiencePolicyHash',
  'suggestionCommitment',
  'sourceEvidence',
  'metadataComplete',
  'execution',
];
