// Browser handoffs and signing intents (service-api.md §6): links for a human-controlled wallet. The one-time
// token lives only in the URL fragment; loopsign keeps it in the journal (0600) to read the link's status later,
// and prints it nowhere but inside the URL.
import type { Context } from '../context.js';
import { RefusedError, ServiceError, UsageError } from '../errors.js';
import { Journal, journalId } from '../journal/journal.js';
import { loadAskFile, askEnvironment } from '../ask/prepare.js';
import { checkImage } from './check.js';

type Json = Record<string, any>;

export function parseTtl(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d+)(ms|s|m|h)?$/.exec(value.trim());
  if (!m) throw new UsageError('invalid_ttl', `--ttl ${value} must look like 30m, 90s, 1h or a number of milliseconds`);
  const n = Number(m[1]);
  return n * ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 'ms'] ?? 1);
}

/**
 * The link a human will open carries a one-time token: it must be on the configured service's own origin (a
 * foreign origin would receive the token) and the token only in the fragment (a query string reaches server
 * logs and referrers). Either is refused (exit 5) before the token is kept anywhere.
 */
function tokenFromLink(url: string, route: string, baseUrl: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ServiceError('invalid_response', 'the service returned a link that is not a URL');
  }
  if (u.origin !== new URL(baseUrl).origin) throw new RefusedError('foreign_link_origin', `the link points at ${u.origin}, not at the configured service ${new URL(baseUrl).origin}; it was not kept or printed`);
  if (u.searchParams.has('token')) throw new RefusedError('link_token_in_query', 'the service put the link token in the query string; it must only be in the fragment');
  if (!u.pathname.includes(route)) throw new ServiceError('invalid_response', `the link ${u.origin}${u.pathname} is not a ${route} URL`);
  const token = new URLSearchParams(u.hash.slice(1)).get('token');
  if (!token) throw new ServiceError('invalid_response', 'the link carries no #token= fragment');
  return token;
}

export async function createHandoff(ctx: Context, file: string, images: string[], ttl?: string): Promise<Json> {
  const config = await ctx.config();
  const loaded = await loadAskFile(file, config.chainId.value);
  if (images.length > 4) throw new UsageError('too_many_images', 'a handoff carries at most 4 generated images');
  const checked = [];
  for (const f of images) checked.push(await checkImage(f));
  const ttlMs = parseTtl(ttl);
  const env = await askEnvironment(ctx, true, false);
  const generatedImages = checked.map((i) => ({ filename: i.filename, imageBase64: i.bytes.toString('base64'), mimeType: i.mimeType, sha256: i.sha256, sizeBytes: i.sizeBytes }));
  const res = await env.service.http.request<Json>({
    method: 'POST',
    path: '/api/agent/handoffs',
    body: { request: loaded.body, ...(generatedImages.length ? { generatedImages } : {}), ...(ttlMs !== undefined ? { ttlMs } : {}) },
    idempotent: false,
    timeoutMs: 60_000,
  });
  const token = tokenFromLink(String(res.handoffUrl), '/agent/handoff/', env.chain.baseUrl.value!);
  const journal = await Journal.open(journalId('handoff', [res.handoffId ?? res.id]), { kind: 'handoff', chainId: config.chainId.value, wallet: '' });
  await journal.step('created', { handoffId: res.handoffId ?? res.id, token, expiresAt: res.expiresAt, baseUrl: env.chain.baseUrl.value });
  await journal.close();
  for (const w of (res.warnings ?? []) as string[]) ctx.out.warn(w);
  return { handoffId: res.handoffId ?? res.id, handoffUrl: res.handoffUrl, expiresAt: res.expiresAt, effectiveTtlMs: res.effectiveTtlMs, status: res.status, assets: res.assets ?? [], warnings: res.warnings ?? [] };
}

export async function createSigningLink(ctx: Context, file: string, ttl?: string): Promise<Json> {
  const config = await ctx.config();
  const loaded = await loadAskFile(file, config.chainId.value);
  const ttlMs = parseTtl(ttl);
  const env = await askEnvironment(ctx, true, false);
  const res = await env.service.http.request<Json>({ method: 'POST', path: '/api/agent/signing-intents', body: { request: loaded.body, ...(ttlMs !== undefined ? { ttlMs } : {}) }, idempotent: false });
  const token = tokenFromLink(String(res.signingUrl), '/agent/sign/', env.chain.baseUrl.value!);
  const journal = await Journal.open(journalId('signing-intent', [res.id]), { kind: 'signing-intent', chainId: config.chainId.value, wallet: '' });
  await journal.step('created', { intentId: res.id, token, expiresAt: res.expiresAt });
  await journal.close();
  return { intentId: res.id, signingUrl: res.signingUrl, expiresAt: res.expiresAt, status: res.status, warnings: res.warnings ?? [] };
}

async function linkStatus(ctx: Context, kind: 'handoff' | 'signing-intent', id: string): Promise<Json> {
  const pattern = kind === 'handoff' ? /^ahf_[0-9a-f]{32}$/ : /^asi_[0-9a-f]{32}$/;
  if (!pattern.test(id)) throw new UsageError('invalid_id', `${id} is not a ${kind === 'handoff' ? 'handoff (ahf_…)' : 'signing intent (asi_…)'} id`);
  const data = await Journal.read(journalId(kind, [id]));
  if (!data?.token) throw new UsageError('unknown_link', `no token for ${id} in the journal: only links created here can be read`, { hint: 'the token lives only in the link URL and in the journal of the machine that created it' });
  const env = await askEnvironment(ctx, false, false);
  const header = kind === 'handoff' ? 'x-rateloop-handoff-token' : 'x-rateloop-signing-intent-token';
  const route = kind === 'handoff' ? `/api/agent/handoffs/${id}` : `/api/agent/signing-intents/${id}`;
  try {
    return await env.service.http.request<Json>({ method: 'GET', path: route, headers: { [header]: String(data.token) }, idempotent: true });
  } catch (error) {
    if (error instanceof ServiceError && (error.details as { status?: number })?.status === 410) {
      throw new ServiceError('link_expired', `the ${kind === 'handoff' ? 'handoff link' : 'signing link'} ${id} expired at ${String(data.expiresAt)}`, {
        hint: `create a new one with \`loopsign ${kind === 'handoff' ? 'handoff' : 'sign-link'} --file ask.json\``,
        details: { status: 410 },
      });
    }
    throw error;
  }
}

export const handoffStatus = (ctx: Context, id: string) => linkStatus(ctx, 'handoff', id);
export const signingLinkStatus = (ctx: Context, id: string) => linkStatus(ctx, 'signing-intent', id);
