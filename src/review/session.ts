// What every workspace review command starts from: the service origin (the sandbox manifest's on 31337) and the
// user's credential, read once and checked for its form before any request.
import type { Context } from '../context.js';
import { AssuranceClient } from './assurance.js';
import { readCredential, type CredentialKind, type CredentialSource } from './credential.js';
import { WorkspaceMcp } from './workspace-mcp.js';
import { ReviewRecords } from './records.js';

export async function reviewBaseUrl(ctx: Context): Promise<string> {
  const config = await ctx.config();
  const { resolveChain } = await import('../chains/index.js');
  const chain = await resolveChain(config);
  const { DEFAULT_BASE_URL } = await import('../service/client.js');
  // One spelling of the origin: it keys the journals.
  return (chain.baseUrl.value ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
}

/** The assurance routes: a workspace API key only, unless the route also takes an agent token. */
export async function openAssurance(ctx: Context, source: CredentialSource, accepts: CredentialKind[] = ['api_key']): Promise<AssuranceClient> {
  const credential = await readCredential(source, accepts);
  return new AssuranceClient(await reviewBaseUrl(ctx), credential, ctx.out);
}

export async function openWorkspace(ctx: Context, source: CredentialSource): Promise<WorkspaceMcp> {
  const credential = await readCredential(source);
  return new WorkspaceMcp(await reviewBaseUrl(ctx), credential, ctx.out);
}

/** The review journals of the configured service origin. */
export async function reviewRecords(ctx: Context): Promise<ReviewRecords> {
  return new ReviewRecords(await ctx.store(), await reviewBaseUrl(ctx));
}
