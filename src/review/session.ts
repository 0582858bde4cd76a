// What every workspace review command starts from: the service origin (the sandbox manifest's on 31337) and the
// user's credential, read once and checked for its form before any request.
import type { Context } from '../context.js';
import { AssuranceClient } from './assurance.js';
import { readCredential, type CredentialKind, type CredentialSource } from './credential.js';
import { WorkspaceMcp } from './workspace-mcp.js';
import { ReviewRecords } from './records.js';

export async function reviewBaseUrl(ctx: Context): Promise<string> {
  const config = await ctx.config();
  const { resolveChain, assertSandboxRunning } = await import('../chains/index.js');
  const chain = await resolveChain(config, ctx.env, ctx.paths);
  assertSandboxRunning(chain.chain);
  const { DEFAULT_BASE_URL } = await import('../service/client.js');
  // One spelling of the origin: it keys the journals.
  return (chain.baseUrl.value ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
}

/**
 * Where the credential comes from: the flags, else the default file (env LOOPSIGN_API_KEY_FILE, then the config key
 * apiKeyFile), the way `gh` reads GH_TOKEN. The key itself is never an argument.
 */
export async function credentialSource(ctx: Context, source: CredentialSource): Promise<CredentialSource> {
  if (source.apiKeyFile !== undefined || source.apiKeyEnv !== undefined) return source;
  const setting = (await ctx.config()).apiKeyFile;
  return setting.value === undefined
    ? source
    : { apiKeyFile: setting.value, from: setting.source === 'env' ? 'LOOPSIGN_API_KEY_FILE' : 'the config key apiKeyFile' };
}

/** The assurance routes: a workspace API key only, unless the route also takes an agent token. */
export async function openAssurance(
  ctx: Context,
  source: CredentialSource,
  accepts: CredentialKind[] = ['api_key'],
): Promise<AssuranceClient> {
  const credential = await readCredential(await credentialSource(ctx, source), ctx.env, accepts);
  return new AssuranceClient(await reviewBaseUrl(ctx), credential, ctx.out);
}

export async function openWorkspace(ctx: Context, source: CredentialSource): Promise<WorkspaceMcp> {
  const credential = await readCredential(await credentialSource(ctx, source), ctx.env);
  return new WorkspaceMcp(await reviewBaseUrl(ctx), credential, ctx.out);
}

/** The review journals of the configured service origin. */
export async function reviewRecords(ctx: Context): Promise<ReviewRecords> {
  return new ReviewRecords(await ctx.store(), await reviewBaseUrl(ctx));
}
