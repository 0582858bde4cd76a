// MCP endpoints through the official SDK client (streamable HTTP; the SDK sends MCP-Protocol-Version after
// initialize and no Origin). The public endpoint by default: rating and image tools have no HTTP twins, so they are
// spoken here. The workspace endpoint (src/review/workspace-mcp.ts) uses the same client with its own path and a
// fetch of its own (credential, rate limit) around the capped one.
// Every answer is read through a byte cap (DEFAULT_MAX_RESPONSE_BYTES unless told otherwise).
import { LoopsignError, ServiceError } from '../errors.js';
import { serviceCode } from '../error-codes.js';
import { serviceWord } from '../output.js';
import { isDoc, objectField, type ServiceDoc } from './doc.js';
import { DEFAULT_MAX_RESPONSE_BYTES, readCapped, responseTooLarge } from './cap.js';
import { beforeHttp } from '../wasm-tier.js';

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

type CallToolResult = Awaited<ReturnType<import('@modelcontextprotocol/sdk/client/index.js').Client['callTool']>>;
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;
/** A tool's arguments: what loopsign sends (its own values, or a service value it passes back unread). */
export type ToolArgs = Record<string, unknown>;

export interface McpClientOptions {
  /** The endpoint's path (default the public endpoint). */
  path?: string;
  /** The answer cap in bytes. */
  maxBytes?: number;
  /** Wraps the capped fetch the transport uses (the workspace endpoint's credential and rate limit). */
  wrapFetch?: (inner: FetchLike) => FetchLike;
}

export class McpClient {
  private client: import('@modelcontextprotocol/sdk/client/index.js').Client | undefined;
  /** Set when an answer went past the cap: the SDK's own error for the cut stream is then reported as that. */
  private overflowed = false;
  // A cut event stream does not fail the request waiting on it (the SDK would wait for its own timeout): the cap
  // aborts every pending request at once.
  private readonly abort = new AbortController();

  private readonly maxBytes: number;
  private readonly options: McpClientOptions;

  constructor(
    private readonly baseUrl: string,
    options: McpClientOptions | number = {},
  ) {
    beforeHttp();
    this.options = typeof options === 'number' ? { maxBytes: options } : options;
    this.maxBytes = this.options.maxBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  }

  private endpoint(): URL {
    return new URL(`${this.baseUrl.replace(/\/+$/, '')}${this.options.path ?? '/api/mcp/public'}`);
  }

  /** fetch for the SDK transport, with each response body counted and cut off past the cap. */
  private cappedFetch(): (url: string | URL, init?: RequestInit) => Promise<Response> {
    return async (url, init) => {
      const res = await fetch(url, init);
      if (!res.body || NULL_BODY_STATUSES.has(res.status)) return res;
      const max = this.maxBytes;
      const declared = Number(res.headers.get('content-length'));
      let seen = 0;
      const flag = () => {
        this.overflowed = true;
        const error = responseTooLarge(`the service's MCP answer`, max);
        this.abort.abort(error);
        return error;
      };
      if (Number.isFinite(declared) && declared > max) {
        await res.body.cancel().catch(() => undefined);
        throw flag();
      }
      const counter = new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > max) controller.error(flag());
          else controller.enqueue(chunk);
        },
      });
      return new Response(res.body.pipeThrough(counter), { status: res.status, statusText: res.statusText, headers: res.headers });
    };
  }

  /** The SDK reports a cut stream in its own words; past the cap, say what happened. */
  private failure(error: unknown, fallback: () => ServiceError): LoopsignError {
    if (this.overflowed) return responseTooLarge(`the service's MCP answer`, this.maxBytes);
    // A refusal the fetch already explained (credential, rate limit) goes out as it is.
    return error instanceof LoopsignError ? error : fallback();
  }

  private async connect() {
    if (this.client) return this.client;
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const client = new Client({ name: 'loopsign', version: '0.1.0' });
    try {
      const capped = this.cappedFetch();
      const transport = new StreamableHTTPClientTransport(this.endpoint(), {
        fetch: this.options.wrapFetch ? this.options.wrapFetch(capped) : capped,
      });
      await client.connect(transport, { signal: this.abort.signal });
    } catch (error) {
      throw this.failure(
        error,
        () =>
          new ServiceError('mcp_unreachable', `cannot reach the service's MCP endpoint at ${this.baseUrl}: ${(error as Error).message}`, {
            hint: 'check --base-url; the command is safe to run again',
            cause: error,
          }),
      );
    }
    this.client = client;
    return client;
  }

  /** tools/call, the result as the SDK returns it (`structuredContent`, `content`, `isError`). */
  async callTool(name: string, args: ToolArgs, timeoutMs?: number): Promise<CallToolResult> {
    const client = await this.connect();
    try {
      return await client.callTool({ name, arguments: args }, undefined, {
        signal: this.abort.signal,
        ...(timeoutMs === undefined ? {} : { timeout: timeoutMs }),
      });
    } catch (error) {
      throw this.failure(
        error,
        () =>
          new ServiceError('mcp_error', `the MCP call ${name} failed: ${(error as Error).message}`, {
            cause: error,
            details: { tool: name, rpcCode: (error as { code?: unknown }).code },
          }),
      );
    }
  }

  async ping(): Promise<void> {
    await (await this.connect()).ping({ signal: this.abort.signal });
  }

  async listTools(): Promise<{ name: string }[]> {
    const client = await this.connect();
    return (await client.listTools(undefined, { signal: this.abort.signal })).tools;
  }

  /** A tool's `structuredContent` (an empty document when it sent none, or something that is not an object). */
  async call(name: string, args: ToolArgs): Promise<ServiceDoc> {
    const result = await this.callTool(name, args);
    const value = isDoc(result.structuredContent) ? result.structuredContent : {};
    if (result.isError) {
      // As over HTTP: the code and the suggestion only as service words.
      const code = serviceCode(value.code) ?? 'tool_error';
      const text = Array.isArray(result.content) && result.content[0]?.type === 'text' ? String(result.content[0].text) : code;
      const recoverWith = serviceWord(value.recoverWith);
      throw new ServiceError(code, `the service refused ${name}: ${typeof value.message === 'string' ? value.message : text}`, {
        hint: recoverWith ? `the service suggests: ${recoverWith}` : undefined,
        details: { status: value.status, retryable: value.retryable === true, tool: name },
      });
    }
    return value;
  }

  /**
   * tools/call with one argument carrying a large file as base64, streamed: the JSON-RPC body is written as a
   * prefix, the base64 of the bytes in slices, and a suffix — no full base64 string and no JSON copy of it is ever
   * held, so a 10 MB image costs about one copy of memory, not five. Same endpoint and headers as the SDK client.
   */
  async callWithBase64(name: string, args: ToolArgs, field: string, bytes: Uint8Array): Promise<ServiceDoc> {
    const { request } = (await import('undici')).default; // CommonJS: its exports are the `default` of import()
    const { Readable } = await import('node:stream');
    const marker = '__loopsign_streamed_base64__';
    const text = JSON.stringify({
      jsonrpc: '2.0',
      id: `loopsign-${Date.now()}`,
      method: 'tools/call',
      params: { name, arguments: { ...args, [field]: marker } },
    });
    const [head, tail] = text.split(`"${marker}"`) as [string, string];
    const prefix = Buffer.from(`${head}"`);
    const suffix = Buffer.from(`"${tail}`);
    const SLICE = 3 * 16 * 1024; // a multiple of 3: the base64 slices join without padding in between
    const base64Length = 4 * Math.ceil(bytes.length / 3);
    const source = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    async function* body() {
      yield prefix;
      // Small slices, each consumed by the stream before the next is made, keep the garbage between GCs small.
      for (let o = 0; o < source.length; o += SLICE) {
        const text = source.toString('base64', o, Math.min(o + SLICE, source.length));
        const out = Buffer.allocUnsafe(text.length);
        out.write(text, 'latin1');
        yield out;
      }
      yield suffix;
    }
    let res;
    try {
      res = await request(this.endpoint().toString(), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          'content-length': String(prefix.length + base64Length + suffix.length),
        },
        body: Readable.from(body()),
        headersTimeout: 120_000,
        bodyTimeout: 120_000,
      });
    } catch (error) {
      throw new ServiceError('mcp_unreachable', `cannot reach the service's MCP endpoint at ${this.baseUrl}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const answer = await readCapped(res.body, this.maxBytes, `the service's answer to ${name}`, res.headers['content-length']);
    let reply: unknown;
    try {
      reply = JSON.parse(answer.toString('utf8'));
    } catch {
      reply = {};
    }
    // A JSON-RPC error, a result or neither; whatever is not an object is read as absent.
    const rpcError = isDoc(reply) ? reply.error : undefined;
    if (rpcError)
      throw new ServiceError('mcp_error', `the MCP call ${name} failed: ${String(isDoc(rpcError) ? rpcError.message : rpcError)}`, {
        details: { status: res.statusCode },
      });
    const result = objectField(reply, 'result') ?? {};
    const value = objectField(result, 'structuredContent') ?? {};
    if (result.isError) {
      throw new ServiceError(serviceCode(value.code) ?? 'tool_error', `the service refused ${name}: ${String(value.message ?? 'error')}`, {
        details: { status: value.status, retryable: value.retryable === true, tool: name },
      });
    }
    return value;
  }

  async close(): Promise<void> {
    await this.client?.close().catch(() => undefined);
  }
}
