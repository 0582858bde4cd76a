// The public MCP endpoint /api/mcp/public (service-api.md §8): streamable HTTP, stateless JSON-RPC, built on the
// official SDK's low-level Server so tool listings and results carry exactly the service's fields. Other issues
// add their tools with registerTools().
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { ApiError } from './envelope.js';
import { PUBLIC_TOOL_DEFS } from './public-tool-defs.js';

/** The public endpoint's versions, in the order its error data lists them; the last is the one it prefers. */
export const MCP_PROTOCOL_VERSIONS = ['2025-06-18', '2025-11-25'];

/**
 * An initialize request as the service negotiates it: a version it speaks is echoed, any other gets its preferred
 * one. The SDK's Server would echo every version the SDK knows (2025-03-26, 2024-11-05, …), and every later call
 * would then be refused for its MCP-Protocol-Version header.
 */
export function negotiated(body: unknown, versions: readonly string[], preferred: string): unknown {
  const b = body as { method?: unknown; params?: { protocolVersion?: unknown } } | null;
  if (
    b?.method !== 'initialize' ||
    !b.params ||
    typeof b.params.protocolVersion !== 'string' ||
    versions.includes(b.params.protocolVersion)
  )
    return body;
  return { ...b, params: { ...b.params, protocolVersion: preferred } };
}

export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  tier: 'primary' | 'advanced';
  workflow: 'ask' | 'rating' | 'reference' | 'managed';
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
  handler: (args: Record<string, unknown>) => Promise<Record<string, unknown>>;
}

export class McpTools {
  private readonly tools = new Map<string, McpTool>();
  /** Called after each successful tool call (the sandbox's audit chain). */
  onCall: (name: string) => void = () => undefined;

  register(...tools: McpTool[]): void {
    for (const t of tools) this.tools.set(t.name, t);
  }

  /** In the service's order (its tool table), any other after them. */
  list(): McpTool[] {
    const order = Object.keys(PUBLIC_TOOL_DEFS);
    const rank = (t: McpTool) => (order.includes(t.name) ? order.indexOf(t.name) : order.length);
    return [...this.tools.values()].sort((a, b) => rank(a) - rank(b));
  }

  private server(): Server {
    const server = new Server({ name: 'rateloop-public', version: '0.1.0' }, { capabilities: { tools: { listChanged: false } } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: this.list().map((t) => ({
        ...(t.annotations ? { annotations: t.annotations } : {}),
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: t.inputSchema,
        rateLoopTier: t.tier,
        rateLoopWorkflow: t.workflow,
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const tool = this.tools.get(request.params.name);
      if (!tool) {
        const e = new ApiError(404, 'not_found', `Unknown tool: ${request.params.name}`, 'call_tools_list');
        return { content: [{ type: 'text', text: e.message }], isError: true, structuredContent: e.body() };
      }
      try {
        const value = await tool.handler((request.params.arguments ?? {}) as Record<string, unknown>);
        this.onCall(tool.name);
        return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
      } catch (error) {
        const e =
          error instanceof ApiError ? error : new ApiError(500, 'failed_submission', (error as Error).message, 'retry_or_contact_operator');
        return { content: [{ type: 'text', text: e.message }], isError: true, structuredContent: e.body() };
      }
    });
    return server;
  }

  /** One POST, one fresh stateless transport (the SDK's rule for stateless mode). */
  async handle(request: Request, parsedBody: unknown): Promise<Response> {
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = this.server();
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, { parsedBody });
    } finally {
      void server.close();
    }
  }
}

export function jsonRpcError(id: unknown, code: number, message: string, data?: Record<string, unknown>): Record<string, unknown> {
  return { jsonrpc: '2.0', id: id ?? null, error: data ? { code, message, data } : { code, message } };
}
