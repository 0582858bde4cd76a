// loopsign mcp: serve the tools until the host closes the session (docs/agents.md).
import type { Context } from '../context.js';

export async function mcp(ctx: Context, options: { root?: string[] }): Promise<void> {
  const { serveMcp } = await import('../mcp/server.js');
  const { promises: fs } = await import('node:fs');
  const { UsageError } = await import('../errors.js');
  for (const root of options.root ?? []) {
    const stat = await fs.stat(root).catch(() => undefined);
    if (!stat?.isDirectory()) throw new UsageError('invalid_root', `--root ${root} is not a folder`, { hint: 'give a folder the agent may read files from' });
  }
  await serveMcp(ctx, { roots: options.root ?? [] });
}
