// The workspace MCP endpoint /api/agent/v1/mcp (review.md §5) through the project's SDK-based McpClient. The fetch
// given to the SDK's transport is where the endpoint's rules are kept:
// - 60 requests per UTC minute per client, shared with the public MCP and the quote route (§4): loopsign counts its
//   own requests and waits for the next minute rather than be refused, and on 429 waits `Retry-After` and sends the
//   identical request again;
// - no GET: the SSE poll exists only for OAuth sessions' elicitations, which loopsign does not answer, and it would
//   spend the shared budget;
// - the 64 KiB body cap is checked before sending;
// - HTTP refusals become loopsign errors here, with the service's code: 401 names the scopes its WWW-Authenticate
//   challenge asks for (exit 6), others are service errors (exit 3).
// Review tools are read through `structuredContent` (§5.4), never `content[0].text`.
import { LoopsignError, NotReadyError, ServiceError, UsageError } from '../errors.js';
import { httpStatusCode, serviceCode, type ServiceCode, type ServiceWord } from '../error-codes.js';
import type { Output } from '../output.js';
import { McpClient, type FetchLike, type ToolArgs } from '../service/mcp.js';
import { isDoc, objectField, type ServiceDoc } from '../service/doc.js';
import { credentialRefused, type Credential } from './credential.js';

export const WORKSPACE_MCP_PATH = '/api/agent/v1/mcp';
export const MCP_BODY_CAP = 65_536;
export const MCP_REQUESTS_PER_MINUTE = 60;

export interface WorkspaceMcpOptions {
  /** Longest Retry-After honoured (seconds); a longer one is reported instead of waited for. */
  maxRetryAfterSeconds?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

const sleepReal = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Requests per fixed UTC minute, as the service counts them. */
export class MinuteBudget {
  private minute = -1;
  private used = 0;
  constructor(
    private readonly now: () => number,
    private readonly limit: number,
  ) {}

  /** Milliseconds to wait before the next request may go, and counts it. */
  take(): number {
    const t = this.now();
    const minute = Math.floor(t / 60_000);
    if (minute !== this.minute) {
      this.minute = minute;
      this.used = 0;
    }
    if (this.used < this.limit) {
      this.used++;
      return 0;
    }
    this.minute = minute + 1;
    this.used = 1;
    return (minute + 1) * 60_000 - t;
  }
}

function rpcErrorCode(body: unknown): { code?: ServiceWord; message?: string; rpcCode?: number } {
  const e = (body as { error?: { code?: number; message?: string; data?: { code?: string } } } | null)?.error;
  return { code: serviceCode(e?.data?.code), message: typeof e?.message === 'string' ? e.message : undefined, rpcCode: e?.code };
}

/** Builds the transport's fetch for one credential, around `inner` (the client's byte-capped fetch). */
export function workspaceFetch(credential: Credential, out: Output | undefined, o: WorkspaceMcpOptions = {}, inner: FetchLike = fetch) {
  const sleep = o.sleep ?? sleepReal;
  const now = o.now ?? Date.now;
  const budget = new MinuteBudget(now, MCP_REQUESTS_PER_MINUTE);
  const maxRetryAfter = o.maxRetryAfterSeconds ?? 90;
  return async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const method = (init?.method ?? 'GET').toUpperCase();
    if (method === 'GET') return new Response(null, { status: 405 });
    const body = typeof init?.body === 'string' ? init.body : '';
    if (Buffer.byteLength(body) > MCP_BODY_CAP)
      throw new UsageError(
        'request_too_large',
        `the MCP request is ${Buffer.byteLength(body)} bytes; the service accepts at most 64 KiB (${MCP_BODY_CAP} bytes)`,
      );
    const headers = new Headers(init?.headers);
    headers.set('authorization', credential.authorization);
    headers.delete('origin');
    for (let attempt = 1; ; attempt++) {
      const wait = budget.take();
      if (wait > 0) {
        out?.progress('mcp.budget', `keeping to the service's 60 MCP requests per minute: waiting ${(wait / 1000).toFixed(1)} s`, {
          waitMs: wait,
        });
        await sleep(wait);
      }
      let res: Response;
      try {
        res = await inner(url, { ...init, headers });
      } catch (error) {
        if (error instanceof LoopsignError) throw error;
        throw new ServiceError('mcp_unreachable', `cannot reach the workspace MCP endpoint: ${(error as Error).message}`, {
          hint: 'check --base-url and your connection; the command is safe to run again',
          cause: error,
          details: { retryable: true },
        });
      }
      if (res.status === 429) {
        const ra = Number(res.headers.get('retry-after') ?? '1');
        const seconds = Number.isFinite(ra) && ra >= 0 ? ra : 1;
        await res.body?.cancel();
        if (seconds > maxRetryAfter || attempt > 5) {
          throw new ServiceError(
            'rate_limit_exceeded',
            `the workspace MCP endpoint is over its rate limit (60 requests a minute per client, shared with the public MCP); it asks to wait ${seconds} s`,
            {
              hint: `wait ${seconds} s and run the same command again; it is safe to repeat`,
              details: { status: 429, retryable: true, retryAfterSeconds: seconds },
            },
          );
        }
        out?.progress('mcp.retry', `the service asked to wait ${seconds} s (HTTP 429); retrying the same request`, {
          retryAfterSeconds: seconds,
        });
        await sleep(seconds * 1000);
        continue;
      }
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text.length ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      if (!res.ok && res.status !== 202) {
        const { code = httpStatusCode(res.status), message = `HTTP ${res.status}` } = rpcErrorCode(parsed);
        if (res.status === 401 || code === 'insufficient_scope' || code === 'insufficient_role')
          throw credentialRefused(code, res.status, message, res.headers.get('www-authenticate') ?? undefined);
        throw new ServiceError(code, `the workspace MCP endpoint refused the request: ${message}`, {
          details: { status: res.status, retryable: res.status >= 500 },
        });
      }
      // A JSON-RPC error without an id answers no request the SDK could match: reported here rather than waited on.
      const rpc = parsed as { id?: unknown; error?: unknown } | undefined;
      if (rpc && rpc.error !== undefined && rpc.id === null) {
        const { message = 'JSON-RPC error', rpcCode } = rpcErrorCode(parsed);
        throw new ServiceError(
          'mcp_protocol_error',
          `the workspace MCP endpoint answered with a JSON-RPC error: ${message} (${String(rpcCode)})`,
          { details: { status: res.status, rpcCode } },
        );
      }
      return new Response(res.status === 202 || text.length === 0 ? null : text, { status: res.status, headers: res.headers });
    }
  };
}

/** Codes the service marks retryable: the identical call is repeated a few times. */
const RETRY_CODES = new Set([
  'connection_not_ready',
  'private_review_preparing',
  'review_evaluation_busy',
  'adaptive_review_unavailable',
  'database_coordination_busy',
]);

export class WorkspaceMcp {
  private readonly client: McpClient;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    readonly baseUrl: string,
    credential: Credential,
    private readonly out: Output | undefined,
    options: WorkspaceMcpOptions = {},
  ) {
    this.sleep = options.sleep ?? sleepReal;
    this.client = new McpClient(baseUrl, {
      path: WORKSPACE_MCP_PATH,
      wrapFetch: (capped) => workspaceFetch(credential, out, options, capped),
    });
  }

  /** One review tool: its `structuredContent`, or the service's refusal as a loopsign error. */
  async tool(name: string, args: ToolArgs = {}, timeoutMs = 30_000): Promise<ServiceDoc> {
    for (let attempt = 1; ; attempt++) {
      let result;
      try {
        result = await this.client.callTool(name, args, timeoutMs);
      } catch (error) {
        if (
          error instanceof ServiceError &&
          (error.details as { rpcCode?: number } | undefined)?.rpcCode === -32602 &&
          /Unknown/i.test(error.message)
        )
          throw await this.unknownTool(name);
        throw error;
      }
      const value = isDoc(result.structuredContent) ? result.structuredContent : undefined;
      if (result.isError) {
        // A code is something an agent branches on: only a service word.
        const code = serviceCode(value?.code) ?? 'tool_error';
        const message = typeof value?.message === 'string' ? value.message : code;
        if (value?.retryable === true && RETRY_CODES.has(code) && attempt <= 3) {
          this.out?.progress('mcp.retry', `${name}: ${code}; repeating the identical call`, { code, attempt });
          await this.sleep(1000 * attempt);
          continue;
        }
        throw toolError(name, code, message, value?.retryable === true);
      }
      if (!value)
        throw new ServiceError('invalid_response', `the service answered ${name} without structuredContent`, { details: { tool: name } });
      return value;
    }
  }

  /** tools/list, for naming what a key can do (a pairing key lists only the registration tools). */
  listTools(): Promise<{ name: string }[]> {
    return this.client.listTools();
  }

  ping(): Promise<void> {
    return this.client.ping();
  }

  private async unknownTool(name: string): Promise<LoopsignError> {
    const tools = (await this.listTools().catch(() => [])).map((t) => t.name);
    if (tools.includes('rateloop_register_agent')) {
      // A pairing key: say where the registration stands.
      const status = await this.tool('rateloop_get_registration_status', {}).then(parseRegistration, () => undefined);
      return credentialRefusedPairing(status?.status);
    }
    return new ServiceError('tool_not_offered', `the workspace MCP endpoint does not offer ${name} to this credential`, {
      details: { tools },
    });
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

function credentialRefusedPairing(status: string | undefined): LoopsignError {
  return credentialRefused(
    'agent_pairing_not_approved',
    403,
    `This key is a pairing credential (registration ${status ?? 'status unknown'}): the workspace owner has not approved the agent yet, so only the registration tools are available.`,
  );
}

/** The answer of rateloop_register_agent / rateloop_get_registration_status (review.md §5.5.8). */
export function parseRegistration(doc: ServiceDoc): { status: string; workspaceId: string | null; integrationId: string | null } {
  const registration = objectField(doc, 'registration');
  const integration = objectField(doc, 'integration');
  const status = registration?.status;
  if (typeof status !== 'string') throw new ServiceError('invalid_response', 'the registration status has no registration.status');
  const ws = registration?.workspaceId ?? integration?.workspaceId;
  return {
    status,
    workspaceId: typeof ws === 'string' && /^ws_[0-9a-f]{32}$/.test(ws) ? ws : null,
    integrationId: typeof integration?.integrationId === 'string' ? integration.integrationId : null,
  };
}

/** A tool error (review.md §3.2) as a loopsign error with the documented exit code. */
export function toolError(tool: string, code: ServiceWord | ServiceCode, message: string, retryable: boolean): LoopsignError {
  if (
    code === 'insufficient_scope' ||
    code === 'invalid_agent_credential' ||
    code === 'agent_integration_inactive' ||
    code === 'integration_inactive'
  )
    return credentialRefused(code, 403, message);
  if (code === 'review_not_requested') {
    return new NotReadyError(
      'review_not_requested',
      `${tool}: human review has not been requested for this opportunity; it is not approval`,
      {
        hint: 'request it first: loopsign review request <opportunityId>',
        details: { state: 'not_requested', approved: false },
      },
    );
  }
  if (code === 'result_not_ready')
    return new NotReadyError('result_not_ready', `${tool}: the review has no result yet; it is not approval`, {
      details: { state: 'pending', approved: false },
    });
  return new ServiceError(code, `the service refused ${tool}: ${message}`, { details: { tool, retryable } });
}
