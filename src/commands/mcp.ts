// loopsign mcp: serve the tools until the host closes the session (docs/agents.md).
import type { Context } from '../context.js';

export async function mcp(ctx: Context): Promise<void> {
  const { serveMcp } = await import('../mcp/server.js');
  await serveMcp(ctx);
}
