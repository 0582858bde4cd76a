// The sandbox service's HTTP surface on one port: the paid-feedback JSON routes, the public MCP endpoint, the
// drand beacon, and the test controls under /__sandbox (never part of the live service; see docs/sandbox.md).
import { Hono, type Context } from 'hono';
import type { AskService } from './asks.js';
import type { Hostile } from './hostile.js';
import { ApiError, invalidRequest } from './envelope.js';
import { jsonRpcError, MCP_PROTOCOL_VERSIONS, negotiated, type McpTools } from './mcp.js';
import type { SandboxBeacon } from '../beacon.js';
import type { SandboxEvidence } from './evidence.js';
import type { RatingService } from './rating.js';
import type { ImageService } from './images.js';
import type { GenerationService } from './generation.js';
import type { ReviewRoutes } from './review-routes.js';

export const BODY_CAP_LARGE = 58_021_206;
export const BODY_CAP_CONFIRM = 131_072;

export interface RateLimits {
  read: number;
  write: number;
  mcp: number;
  windowSeconds: number;
}

export const SPEC_RATE_LIMITS: RateLimits = { read: 120, write: 30, mcp: 120, windowSeconds: 60 };

/** Fixed windows per concrete path, method and client (service-api.md §3.2). */
export class RateLimiter {
  private readonly buckets = new Map<string, number>();
  constructor(public limits: RateLimits) {}

  /** Seconds to wait, or 0 when the request may go ahead. */
  hit(path: string, method: string, cls: 'read' | 'write' | 'mcp', subject: string): number {
    const now = Math.floor(Date.now() / 1000);
    const windowStart = now - (now % this.limits.windowSeconds);
    const key = `${path}:${method}:${windowStart}:${subject}`;
    const count = (this.buckets.get(key) ?? 0) + 1;
    this.buckets.set(key, count);
    if (this.buckets.size > 10_000) this.buckets.clear();
    return count > this.limits[cls] ? Math.max(1, windowStart + this.limits.windowSeconds - now) : 0;
  }

  /** Forget every count (a reset: the next client must not pay for the requests of the one before). */
  clear(): void {
    this.buckets.clear();
  }
}

export interface Fault {
  route: string; // "METHOD /path/prefix" or "* /path/prefix"; a ":name" segment matches any one segment
  kind: 'status' | 'timeout' | 'reset' | 'after_commit';
  status?: number;
  delayMs?: number;
  retryAfter?: number;
  count: number;
}

export class Faults {
  private list: Fault[] = [];

  add(fault: Fault): void {
    this.list.push(fault);
  }

  clear(): void {
    this.list = [];
  }

  active(): Fault[] {
    return this.list;
  }

  /** The fault that applies to this request (consuming one use), if any. */
  take(method: string, path: string): Fault | undefined {
    const f = this.list.find((x) => {
      const [m, prefix] = x.route.split(' ') as [string, string];
      const pattern = new RegExp(
        `^${prefix
          .split('/')
          .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
          .join('/')}`,
      );
      return (m === '*' || m === method) && pattern.test(path);
    });
    if (!f) return undefined;
    if (--f.count <= 0) this.list = this.list.filter((x) => x !== f);
    return f;
  }
}

export interface ControlHooks {
  state(): Promise<Record<string, unknown>>;
  advance(seconds: number): Promise<Record<string, unknown>>;
  keeperTick(): Promise<Record<string, unknown>>;
  fund(body: Record<string, unknown>): Promise<Record<string, unknown>>;
  content(body: Record<string, unknown>): Promise<Record<string, unknown>>;
  settings(body: Record<string, unknown>): Record<string, unknown>;
  reset(): Promise<Record<string, unknown>>;
}

function errorResponse(c: Context, error: ApiError, headers: Record<string, string> = {}): Response {
  for (const [k, v] of Object.entries(headers)) c.header(k, v);
  return c.json(error.body(), error.status as never);
}

function internal(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return new ApiError(
    500,
    'failed_submission',
    `Unexpected error: ${(error as Error).message ?? String(error)}`,
    'retry_or_contact_operator',
  );
}

export function buildApp(
  asks: AskService,
  hostile: Hostile,
  mcp: McpTools,
  beacon: SandboxBeacon,
  control: ControlHooks,
  limiter: RateLimiter,
  faults: Faults,
  evidence: SandboxEvidence,
  rating: RatingService,
  images: ImageService,
  generation: GenerationService,
  review: ReviewRoutes,
): Hono {
  const app = new Hono();
  const subject = (c: Context) =>
    `ip:${(c.env as { incoming?: { socket?: { remoteAddress?: string } } })?.incoming?.socket?.remoteAddress ?? 'unknown'}`;

  const readBody = async (c: Context, cap: number): Promise<unknown> => {
    const declared = Number(c.req.header('content-length') ?? '0');
    if (declared > cap) throw new ApiError(413, 'request_entity_too_large', 'Request body is too large.', 'reduce_payload_size');
    const buf = await c.req.arrayBuffer();
    if (buf.byteLength > cap) throw new ApiError(413, 'request_entity_too_large', 'Request body is too large.', 'reduce_payload_size');
    try {
      return JSON.parse(new TextDecoder().decode(buf));
    } catch {
      throw invalidRequest();
    }
  };

  // Faults first (test control), then rate limits, for the service routes.
  app.use('/api/*', async (c, next) => {
    const fault = faults.take(c.req.method, c.req.path);
    if (fault?.kind === 'reset') {
      (c.env as { incoming?: { socket?: { destroy(): void } } })?.incoming?.socket?.destroy();
      return new Response(null);
    }
    if (fault?.kind === 'timeout') await new Promise((r) => setTimeout(r, fault.delayMs ?? 30_000));
    if (fault?.kind === 'status') {
      const status = fault.status ?? 500;
      const e =
        status === 429
          ? new ApiError(429, 'rate_limit_exceeded', 'Too many requests', 'retry_after_delay')
          : status === 503
            ? new ApiError(503, 'service_unavailable', 'Service temporarily unavailable.', 'retry_later')
            : new ApiError(
                status,
                status >= 500 ? 'internal_error' : 'invalid_arguments',
                `Injected fault ${status}.`,
                status >= 500 ? 'retry_or_contact_operator' : null,
              );
      return errorResponse(c, e, status === 429 ? { 'Retry-After': String(fault.retryAfter ?? 1) } : {});
    }
    // The tokenless routes under /api/agent/v1 keep their own rules (the workspace MCP its 60 a minute; the
    // assurance routes none), review.md §4.
    if (c.req.path.startsWith('/api/agent/') && !c.req.path.startsWith('/api/agent/v1/')) {
      const cls = c.req.method === 'GET' ? 'read' : 'write';
      const wait = limiter.hit(c.req.path, c.req.method, cls, subject(c));
      if (wait > 0)
        return errorResponse(c, new ApiError(429, 'rate_limit_exceeded', 'Too many requests', 'retry_after_delay'), {
          'Retry-After': String(wait),
        });
    }
    await next();
    if (fault?.kind === 'after_commit') {
      c.res = new Response(
        JSON.stringify(
          new ApiError(500, 'internal_error', 'Injected fault after the request was processed.', 'retry_or_contact_operator').body(),
        ),
        {
          status: 500,
          headers: { 'content-type': 'application/json' },
        },
      );
    }
  });

  const route = (fn: (c: Context) => Promise<unknown> | unknown) => async (c: Context) => {
    if ((c.req.header('authorization') ?? '').trim() !== '') {
      c.header(
        'WWW-Authenticate',
        `Bearer realm="rateloop-mcp", resource_metadata="${new URL(c.req.url).origin}/.well-known/oauth-protected-resource"`,
      );
      return errorResponse(c, new ApiError(401, 'transport_auth_required', 'Invalid bearer token.', 'provide_bearer_token'));
    }
    try {
      const body = (await fn(c)) as Record<string, unknown>;
      // Every state-changing call is an audit event of the workspace (the chain covers all sandbox actions).
      if (c.req.method === 'POST')
        evidence.audit(
          `agent.${c.req.routePath
            .replace('/api/agent/', '')
            .replace(/[/:]+/g, '.')
            .replace(/^\.|\.$/g, '')}`,
          'operation',
          String(body.operationKey ?? c.req.param('key') ?? 'quote'),
        );
      return c.json(body);
    } catch (error) {
      return errorResponse(c, internal(error));
    }
  };
  const query = (c: Context) => ({
    chainId: c.req.query('chainId') ?? null,
    clientRequestId: c.req.query('clientRequestId') ?? null,
    walletAddress: c.req.query('walletAddress') ?? null,
  });

  app.get(
    '/api/agent/templates',
    route(() => asks.templates()),
  );
  app.post(
    '/api/agent/quote',
    route(async (c) => asks.quote(await readBody(c, BODY_CAP_LARGE))),
  );
  app.post(
    '/api/agent/asks',
    route(async (c) => asks.askRoute(await readBody(c, BODY_CAP_LARGE))),
  );
  app.get(
    '/api/agent/asks/by-client-request',
    route(async (c) => {
      const op = asks.lookup(query(c));
      return op ? asks.statusWithHints(op) : asks.notFoundBody();
    }),
  );
  app.post(
    '/api/agent/asks/:key/confirm',
    route(async (c) => asks.confirm(c.req.param('key')!, await readBody(c, BODY_CAP_CONFIRM))),
  );
  app.post(
    '/api/agent/asks/:key/confirm-feedback-bonus',
    route(async (c) => asks.confirmBonus(c.req.param('key')!, await readBody(c, BODY_CAP_CONFIRM))),
  );
  app.get(
    '/api/agent/asks/:key',
    route((c) => asks.status(c.req.param('key')!)),
  );
  app.get(
    '/api/agent/results/by-client-request',
    route(async (c) => asks.result(undefined, asks.lookup(query(c)), c.req.query('contentId'))),
  );
  app.get(
    '/api/agent/results/by-content/:contentId',
    route(async (c) => {
      const id = c.req.param('contentId')!;
      if (!/^[1-9][0-9]*$/.test(id))
        throw new ApiError(400, 'invalid_arguments', 'contentId must be a positive integer.', 'fix_request_and_retry');
      return asks.resultForContent(BigInt(id), null);
    }),
  );
  app.get(
    '/api/agent/results/:key',
    route((c) => asks.result(c.req.param('key')!, asks.store.get(c.req.param('key')!), c.req.query('contentId'))),
  );

  // Before evidence: its hostile middleware wraps the run evidence route.
  app.route('/', review.routes());
  app.route('/', evidence.routes());
  app.route('/', rating.routes());
  app.route('/', images.routes());
  app.route('/', generation.routes());

  // Public MCP (service-api.md §8.1).
  app.get('/api/mcp/public', (c) => {
    c.header('Allow', 'POST, OPTIONS');
    return c.json(
      {
        code: 'method_not_allowed',
        message: 'Use POST with JSON-RPC.',
        recoverWith: 'use_post_json_rpc',
        allowedMethods: ['POST', 'OPTIONS'],
        supportedTransports: ['streamable-http'],
      },
      405,
    );
  });
  app.options(
    '/api/mcp/public',
    () =>
      new Response(null, {
        status: 204,
        headers: {
          'Access-Control-Allow-Headers': 'content-type, mcp-protocol-version',
          'Access-Control-Allow-Methods': 'POST, OPTIONS',
          Vary: 'Origin',
        },
      }),
  );
  app.post('/api/mcp/public', async (c) => {
    if (c.req.header('origin'))
      return c.json(jsonRpcError(null, -32000, 'Origin is not allowed for this MCP server.', { code: 'origin_not_allowed' }), 403);
    if (limiter.hit(c.req.path, 'POST', 'mcp', subject(c)) > 0)
      return c.json(jsonRpcError(null, -32000, 'Too many requests', { code: 'rate_limit_exceeded' }), 429);
    const text = await c.req.text();
    if (text.length > BODY_CAP_LARGE) return c.json(jsonRpcError(null, -32000, 'Request body is too large.'), 413);
    let body: { id?: unknown; method?: unknown; jsonrpc?: unknown };
    try {
      body = JSON.parse(text);
    } catch {
      return c.json(jsonRpcError(null, -32700, 'Parse error'));
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return c.json(jsonRpcError(null, -32600, 'Invalid Request'));
    if (body.jsonrpc !== '2.0' || typeof body.method !== 'string') return c.json(jsonRpcError(body.id, -32600, 'Invalid Request'));
    if (body.method !== 'initialize') {
      const version = c.req.header('mcp-protocol-version');
      if (!version)
        return c.json(
          jsonRpcError(body.id, -32000, 'Missing MCP-Protocol-Version header.', { supportedProtocolVersions: MCP_PROTOCOL_VERSIONS }),
        );
      if (!MCP_PROTOCOL_VERSIONS.includes(version))
        return c.json(
          jsonRpcError(body.id, -32000, `Unsupported MCP-Protocol-Version: ${version}.`, {
            supportedProtocolVersions: MCP_PROTOCOL_VERSIONS,
          }),
        );
    }
    if (body.id === undefined || body.id === null) return new Response(null, { status: 202 });
    const headers = new Headers(c.req.raw.headers);
    headers.set('accept', 'application/json, text/event-stream');
    const request = new Request(c.req.url, { method: 'POST', headers, body: text });
    return mcp.handle(request, negotiated(body, MCP_PROTOCOL_VERSIONS, '2025-11-25'));
  });

  // The drand-style beacon (its clock is the chain's clock).
  app.get('/drand/:hash/info', (c) =>
    c.req.param('hash') === beacon.network.chainHash ? c.json(beacon.info()) : c.json({ error: 'unknown chain hash' }, 404),
  );
  app.get('/drand/:hash/public/:round', (c) => {
    if (c.req.param('hash') !== beacon.network.chainHash) return c.json({ error: 'unknown chain hash' }, 404);
    const param = c.req.param('round');
    const round = param === 'latest' ? beacon.currentRound() : Number(param);
    const b = beacon.round(round);
    return b ? c.json(b) : c.json({ error: `round ${param} is not available yet` }, 425 as never);
  });

  // Test controls.
  const ctl = (fn: (body: Record<string, unknown>) => Promise<unknown> | unknown) => async (c: Context) => {
    try {
      const body =
        c.req.method === 'GET' || c.req.method === 'DELETE' ? {} : ((await c.req.json().catch(() => ({}))) as Record<string, unknown>);
      return c.json((await fn(body)) as Record<string, unknown>);
    } catch (error) {
      return c.json({ error: (error as Error).message }, 400);
    }
  };
  app.get(
    '/__sandbox/state',
    ctl(() => control.state()),
  );
  app.post(
    '/__sandbox/time',
    ctl((b) => control.advance(Number(b.advanceSeconds ?? 0))),
  );
  app.post(
    '/__sandbox/keeper/tick',
    ctl(() => control.keeperTick()),
  );
  app.post(
    '/__sandbox/fund',
    ctl((b) => control.fund(b)),
  );
  app.post(
    '/__sandbox/content',
    ctl((b) => control.content(b)),
  );
  app.post(
    '/__sandbox/settings',
    ctl((b) => control.settings(b)),
  );
  app.post(
    '/__sandbox/reset',
    ctl(() => control.reset()),
  );
  app.get(
    '/__sandbox/faults',
    ctl(() => ({ faults: faults.active() })),
  );
  app.post(
    '/__sandbox/faults',
    ctl((b) => {
      faults.add({
        route: String(b.route),
        kind: b.kind as Fault['kind'],
        status: b.status as number | undefined,
        delayMs: b.delayMs as number | undefined,
        retryAfter: b.retryAfter as number | undefined,
        count: Number(b.count ?? 1),
      });
      return { faults: faults.active() };
    }),
  );
  app.delete(
    '/__sandbox/faults',
    ctl(() => (faults.clear(), { faults: [] })),
  );
  app.get(
    '/__sandbox/hostile',
    ctl(() => ({ scenarios: hostile.scenarios, armed: hostile.active() })),
  );
  app.post(
    '/__sandbox/hostile',
    ctl((b) => (hostile.arm(String(b.scenario), Number(b.count ?? 1)), { armed: hostile.active() })),
  );
  app.delete(
    '/__sandbox/hostile',
    ctl(() => (hostile.clear(), { armed: {} })),
  );

  app.notFound((c) => c.json(new ApiError(404, 'not_found', `No route for ${c.req.method} ${c.req.path}.`, null).body(), 404));
  app.onError((error, c) => errorResponse(c, internal(error)));
  return app;
}
