// The public MCP endpoint through the official SDK client (streamable HTTP; the SDK sends MCP-Protocol-Version
// after initialize and no Origin). Rating and image tools have no HTTP twins, so they are spoken here.
// Every answer is read through a byte cap (DEFAULT_MAX_RESPONSE_BYTES unless told otherwise).
import { ServiceError } from '../errors.js';
import { serviceWord } from '../output.js';
import type { Json } from './client.js';
import { DEFAULT_MAX_RESPONSE_BYTES, readCapped, responseTooLarge } from './cap.js';

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

export class McpClient {
  private client: import('@modelcontextprotocol/sdk/client/index.js').Client | undefined;
  /** Set when an answer went past the cap: the SDK's own error for the cut stream is then reported as that. */
  private overflowed = false;
  // A cut event stream does not fail the request waiting on it (the SDK would wait for its own timeout): the cap
  // aborts every pending request at once.
  private readonly abort = new AbortController();

  constructor(
    private readonly baseUrl: string,
    private readonly maxBytes = DEFAULT_MAX_RESPONSE_BYTES,
  ) {}

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
  private failure(fallback: () => ServiceError): ServiceError {
    return this.overflowed ? responseTooLarge(`the service's MCP answer`, this.maxBytes) : fallback();
  }

  private async connect() {
    if (this.client) return this.client;
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const client = new Client({ name: 'loopsign', version: '0.1.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${this.baseUrl.replace(/\/+$/, '')}/api/mcp/public`), { fetch: this.cappedFetch() }), { signal: this.abort.signal });
    } catch (error) {
      throw this.failure(() => new ServiceError('mcp_unreachable', `cannot reach the service's MCP endpoint at ${this.baseUrl}: ${(error as Error).message}`, {
        hint: 'check --base-url; the command is safe to run again',
        cause: error,
      }));
    }
    this.client = client;
    return client;
  }

  async call(name: string, args: Json): Promise<Json> {
    const client = await this.connect();
    let result;
    try {
      result = await client.callTool({ name, arguments: args }, undefined, { signal: this.abort.signal });
    } catch (error) {
      throw this.failure(() => new ServiceError('mcp_error', `the MCP call ${name} failed: ${(error as Error).message}`, { cause: error }));
    }
    const value = (result.structuredContent ?? {}) as Json;
    if (result.isError) {
      // As over HTTP: the code and the suggestion only as service words.
      const code = serviceWord(value.code) ?? 'tool_error';
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
  async callWithBase64(name: string, args: Json, field: string, bytes: Uint8Array): Promise<Json> {
    const { request } = await import('undici');
    const { Readable } = await import('node:stream');
    const marker = '__loopsign_streamed_base64__';
    const text = JSON.stringify({ jsonrpc: '2.0', id: `loopsign-${Date.now()}`, method: 'tools/call', params: { name, arguments: { ...args, [field]: marker } } });
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
      res = await request(`${this.baseUrl.replace(/\/+$/, '')}/api/mcp/public`, {
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
      throw new ServiceError('mcp_unreachable', `cannot reach the service's MCP endpoint at ${this.baseUrl}: ${(error as Error).message}`, { cause: error });
    }
    const answer = await readCapped(res.body, this.maxBytes, `the service's answer to ${name}`, res.headers['content-length']);
    let reply: Json;
    try {
      reply = JSON.parse(answer.toString('utf8')) as Json;
    } catch {
      reply = {};
    }
    if (reply.error) throw new ServiceError('mcp_error', `the MCP call ${name} failed: ${String(reply.error.message)}`, { details: { status: res.statusCode } });
    const result = (reply.result ?? {}) as Json;
    const value = (result.structuredContent ?? {}) as Json;
    if (result.isError) {
      throw new ServiceError(typeof value.code === 'string' ? value.code : 'tool_error', `the service refused ${name}: ${String(value.message ?? 'error')}`, {
        details: { status: value.status, retryable: value.retryable === true, tool: name },
      });
    }
    return value;
  }

  async close(): Promise<void> {
    await this.client?.close().catch(() => undefined);
  }
}
