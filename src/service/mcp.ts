// The public MCP endpoint through the official SDK client (streamable HTTP; the SDK sends MCP-Protocol-Version
// after initialize and no Origin). Rating and image tools have no HTTP twins, so they are spoken here.
import { ServiceError } from '../errors.js';
import { printable, serviceWord } from '../output.js';
import type { Json } from './client.js';

export class McpClient {
  private client: import('@modelcontextprotocol/sdk/client/index.js').Client | undefined;

  constructor(private readonly baseUrl: string) {}

  private async connect() {
    if (this.client) return this.client;
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const client = new Client({ name: 'loopsign', version: '0.1.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${this.baseUrl.replace(/\/+$/, '')}/api/mcp/public`)));
    } catch (error) {
      throw new ServiceError('mcp_unreachable', `cannot reach the service's MCP endpoint at ${this.baseUrl}: ${(error as Error).message}`, {
        hint: 'check --base-url; the command is safe to run again',
        cause: error,
      });
    }
    this.client = client;
    return client;
  }

  async call(name: string, args: Json): Promise<Json> {
    const client = await this.connect();
    let result;
    try {
      result = await client.callTool({ name, arguments: args });
    } catch (error) {
      throw new ServiceError('mcp_error', `the MCP call ${name} failed: ${(error as Error).message}`, { cause: error });
    }
    const value = (result.structuredContent ?? {}) as Json;
    if (result.isError) {
      // As over HTTP: the code and the suggestion only as service words, the message without control characters.
      const code = serviceWord(value.code) ?? 'tool_error';
      const text = Array.isArray(result.content) && result.content[0]?.type === 'text' ? String(result.content[0].text) : code;
      const recoverWith = serviceWord(value.recoverWith);
      throw new ServiceError(code, printable(`the service refused ${name}: ${typeof value.message === 'string' ? value.message : text}`), {
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
    const reply = (await res.body.json().catch(() => ({}))) as Json;
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
