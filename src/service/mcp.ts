// The public MCP endpoint through the official SDK client (streamable HTTP; the SDK sends MCP-Protocol-Version
// after initialize and no Origin). Rating and image tools have no HTTP twins, so they are spoken here.
import { ServiceError } from '../errors.js';
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
      const code = typeof value.code === 'string' ? value.code : 'tool_error';
      const text = Array.isArray(result.content) && result.content[0]?.type === 'text' ? String(result.content[0].text) : code;
      throw new ServiceError(code, `the service refused ${name}: ${typeof value.message === 'string' ? value.message : text}`, {
        hint: typeof value.recoverWith === 'string' ? `the service suggests: ${value.recoverWith}` : undefined,
        details: { status: value.status, retryable: value.retryable === true, tool: name },
      });
    }
    return value;
  }

  async close(): Promise<void> {
    await this.client?.close().catch(() => undefined);
  }
}
