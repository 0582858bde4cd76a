// Browser handoffs and signing intents (service-api.md §6): links for a human-controlled wallet. The one-time
// token lives only in the URL fragment; loopsign keeps it in the journal (0600), with the origin that issued it,
// to read the link's status later from that origin only, and prints it nowhere but inside the URL. Lifetimes are
// held to the spec's bounds on both sides: the user's --ttl and the service's answer.
import type { Context } from '../context.js';
import { RefusedError, ServiceError, UsageError } from '../errors.js';
import { Operation, operationId, readOperation } from '../store/operation.js';
import { loadAskFile } from '../ask/prepare.js';
import { checkImage } from './check.js';
import { arrayField, type ServiceDoc } from '../service/doc.js';

export type LinkKind = 'handoff' | 'signing-intent';

// service-api.md §6: a link lives 30 minutes unless asked otherwise, at least 1 minute, and at most 30 minutes
// (handoffs) or 24 hours (signing intents). The service clamps what is outside; loopsign refuses it instead, so the
// link never lives longer (or shorter) than the user asked.
export const LINK_TTL = {
  handoff: { min: 60_000, max: 1_800_000, default: 1_800_000, label: '1 minute … 30 minutes', name: 'a handoff' },
  'signing-intent': { min: 60_000, max: 86_400_000, default: 1_800_000, label: '1 minute … 24 hours', name: 'a signing link' },
} as const;

export function parseTtl(value: string | undefined, kind: LinkKind): number | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d+)(ms|s|m|h)?$/.exec(value.trim());
  if (!m) throw new UsageError('invalid_ttl', `--ttl ${value} must look like 30m, 90s, 1h or a number of milliseconds`);
  const ms = Number(m[1]) * ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 'ms'] ?? 1);
  const bounds = LINK_TTL[kind];
  if (!Number.isSafeInteger(ms) || ms < bounds.min || ms > bounds.max) {
    throw new UsageError('invalid_ttl', `--ttl ${value} is outside ${bounds.label}, the lifetime ${bounds.name} may have`, {
      hint: `give a --ttl within ${bounds.label} (default 30m)`,
    });
  }
  return ms;
}

/**
 * The service states when the link was created and when it expires (and, for handoffs, effectiveTtlMs). A link
 * that would live longer than asked (the 30-minute default when no --ttl was given) or than the spec allows, or
 * whose lifetime cannot be read, is refused before its token is kept or printed. Both times are on the
 * service's clock, so they are compared with each other, not with this machine's.
 */
function checkLifetime(res: ServiceDoc, kind: LinkKind, askedMs: number | undefined): { createdAt: string; expiresAt: string } {
  const bounds = LINK_TTL[kind];
  const limit = Math.min(askedMs ?? bounds.default, bounds.max);
  // Times are stated as text (ISO 8601): a number, an array or anything else states no time.
  const created = typeof res.createdAt === 'string' ? Date.parse(res.createdAt) : Number.NaN;
  const expires = typeof res.expiresAt === 'string' ? Date.parse(res.expiresAt) : Number.NaN;
  const refuse = (why: string): never => {
    throw new RefusedError(
      'link_lifetime_refused',
      `the ${kind === 'handoff' ? 'handoff' : 'signing'} link ${why}; it was not kept or printed`,
      {
        hint: 'nothing was sent with the link token; create the link again, or check the configured service',
      },
    );
  };
  if (!Number.isFinite(created) || !Number.isFinite(expires)) refuse('does not state when it was created and when it expires');
  const lifetime = expires - created;
  if (lifetime <= 0) refuse(`expires (${String(res.expiresAt)}) before it was created (${String(res.createdAt)})`);
  if (lifetime > limit)
    refuse(`lives ${lifetime / 1000} s (${String(res.createdAt)} → ${String(res.expiresAt)}), longer than the ${limit / 1000} s asked`);
  const ttl = res.effectiveTtlMs;
  if (ttl !== undefined && !(typeof ttl === 'number' && Number.isSafeInteger(ttl) && ttl > 0 && ttl <= limit)) {
    refuse(`reports effectiveTtlMs ${String(ttl)}, not within the ${limit} ms asked`);
  }
  return { createdAt: String(res.createdAt), expiresAt: String(res.expiresAt) };
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
  if (u.origin !== new URL(baseUrl).origin)
    throw new RefusedError(
      'foreign_link_origin',
      `the link points at ${u.origin}, not at the configured service ${new URL(baseUrl).origin}; it was not kept or printed`,
    );
  if (u.searchParams.has('token'))
    throw new RefusedError('link_token_in_query', 'the service put the link token in the query string; it must only be in the fragment');
  if (!u.pathname.includes(route)) throw new ServiceError('invalid_response', `the link ${u.origin}${u.pathname} is not a ${route} URL`);
  const token = new URLSearchParams(u.hash.slice(1)).get('token');
  if (!token) throw new ServiceError('invalid_response', 'the link carries no #token= fragment');
  return token;
}

/** The link's id in its published form (service-api.md: ahf_ / asi_ + 32 hex): it names the journal and the status command. */
const LINK_ID = { handoff: /^ahf_[0-9a-f]{32}$/, 'signing-intent': /^asi_[0-9a-f]{32}$/ } as const;

function linkId(value: unknown, kind: LinkKind): string {
  if (typeof value === 'string' && LINK_ID[kind].test(value)) return value;
  throw new RefusedError(
    'malformed_service_id',
    `the service returned ${kind === 'handoff' ? 'a handoff' : 'a signing intent'} id ${JSON.stringify(String(value).slice(0, 80))}, which is not ${kind === 'handoff' ? 'ahf_' : 'asi_'} + 32 hex; the link was not kept or printed`,
  );
}

/** The warnings the service attached: its texts, shown as they are (anything that is not a text is left out). */
const warningsOf = (res: ServiceDoc): string[] => (arrayField(res, 'warnings') ?? []).filter((w): w is string => typeof w === 'string');

/**
 * A link the service created, read in the order its checks matter: the token's URL (origin, fragment), its lifetime,
 * then its id. Only then is the token kept anywhere.
 */
function readCreatedLink(
  res: ServiceDoc,
  kind: LinkKind,
  urlField: 'handoffUrl' | 'signingUrl',
  askedMs: number | undefined,
  baseUrl: string,
) {
  const url = res[urlField];
  if (typeof url !== 'string') throw new ServiceError('invalid_response', 'the service returned a link that is not a URL');
  const token = tokenFromLink(url, kind === 'handoff' ? '/agent/handoff/' : '/agent/sign/', baseUrl);
  const times = checkLifetime(res, kind, askedMs);
  const id = linkId(kind === 'handoff' ? (res.handoffId ?? res.id) : res.id, kind);
  return { id, url, token, ...times, warnings: warningsOf(res) };
}

/** What `handoff` reports (the token only inside the URL). */
export type CreatedHandoff = {
  handoffId: string;
  handoffUrl: string;
  expiresAt: string;
  effectiveTtlMs: unknown;
  /** The service's words, passed through. */
  status: unknown;
  assets: unknown;
  warnings: string[];
};

/** What `sign-link` reports. */
export type CreatedSigningLink = { intentId: string; signingUrl: string; expiresAt: string; status: unknown; warnings: string[] };

export async function createHandoff(ctx: Context, file: string, images: string[], ttl?: string): Promise<CreatedHandoff> {
  const config = await ctx.config();
  const loaded = await loadAskFile(file, config.chainId.value);
  if (images.length > 4) throw new UsageError('too_many_images', 'a handoff carries at most 4 generated images');
  const checked = [];
  for (const f of images) checked.push(await checkImage(f));
  const ttlMs = parseTtl(ttl, 'handoff');
  const settings = await ctx.chainSettings();
  const service = await ctx.service({ spends: true });
  const generatedImages = checked.map((i) => ({
    filename: i.filename,
    imageBase64: i.bytes.toString('base64'),
    mimeType: i.mimeType,
    sha256: i.sha256,
    sizeBytes: i.sizeBytes,
  }));
  const res = await service.http.request<ServiceDoc>({
    method: 'POST',
    path: '/api/agent/handoffs',
    body: { request: loaded.body, ...(generatedImages.length ? { generatedImages } : {}), ...(ttlMs !== undefined ? { ttlMs } : {}) },
    idempotent: false,
    timeoutMs: 60_000,
  });
  const link = readCreatedLink(res, 'handoff', 'handoffUrl', ttlMs, settings.baseUrl.value!);
  const journal = await Operation.open(await ctx.store(), 'handoff', operationId('handoff', [link.id]), {
    chainId: config.chainId.value,
    wallet: '',
    data: {},
  });
  // The origin the token belongs to: status sends it nowhere else (linkStatus).
  await journal.setStep('created', {
    handoffId: link.id,
    token: link.token,
    createdAt: link.createdAt,
    expiresAt: link.expiresAt,
    origin: new URL(settings.baseUrl.value!).origin,
  });
  await journal.close();
  for (const w of link.warnings) ctx.out.warn(w);
  return {
    handoffId: link.id,
    handoffUrl: link.url,
    expiresAt: link.expiresAt,
    effectiveTtlMs: res.effectiveTtlMs,
    status: res.status,
    assets: res.assets ?? [],
    warnings: link.warnings,
  };
}

export async function createSigningLink(ctx: Context, file: string, ttl?: string): Promise<CreatedSigningLink> {
  const config = await ctx.config();
  const loaded = await loadAskFile(file, config.chainId.value);
  const ttlMs = parseTtl(ttl, 'signing-intent');
  const settings = await ctx.chainSettings();
  const service = await ctx.service({ spends: true });
  const res = await service.http.request<ServiceDoc>({
    method: 'POST',
    path: '/api/agent/signing-intents',
    body: { request: loaded.body, ...(ttlMs !== undefined ? { ttlMs } : {}) },
    idempotent: false,
  });
  const link = readCreatedLink(res, 'signing-intent', 'signingUrl', ttlMs, settings.baseUrl.value!);
  const journal = await Operation.open(await ctx.store(), 'signing-intent', operationId('signing-intent', [link.id]), {
    chainId: config.chainId.value,
    wallet: '',
    data: {},
  });
  await journal.setStep('created', {
    intentId: link.id,
    token: link.token,
    createdAt: link.createdAt,
    expiresAt: link.expiresAt,
    origin: new URL(settings.baseUrl.value!).origin,
  });
  await journal.close();
  return { intentId: link.id, signingUrl: link.url, expiresAt: link.expiresAt, status: res.status, warnings: link.warnings };
}

/** The origin recorded at creation (journals before `origin` kept the base URL, for handoffs only). */
function journaledOrigin(data: { origin?: string; baseUrl?: string }): string | undefined {
  if (typeof data.origin === 'string') return data.origin;
  try {
    return typeof data.baseUrl === 'string' ? new URL(data.baseUrl).origin : undefined;
  } catch {
    return undefined;
  }
}

/** A link's status: the service's view, passed through to the output as it came (the caller prints it, unread). */
async function linkStatus(ctx: Context, kind: LinkKind, id: string): Promise<ServiceDoc> {
  if (!LINK_ID[kind].test(id))
    throw new UsageError('invalid_id', `${id} is not a ${kind === 'handoff' ? 'handoff (ahf_…)' : 'signing intent (asi_…)'} id`);
  const data = readOperation(await ctx.store(), kind, operationId(kind, [id]))?.data;
  if (!data?.token)
    throw new UsageError('unknown_link', `no token for ${id} in the journal: only links created here can be read`, {
      hint: 'the token lives only in the link URL and in the journal of the machine that created it',
    });
  const settings = await ctx.chainSettings();
  const service = await ctx.service();
  // The token is a bearer secret for the service that issued it: it goes to that origin or nowhere.
  const current = new URL(settings.baseUrl.value!).origin;
  const origin = journaledOrigin(data);
  if (origin !== current) {
    const what = kind === 'handoff' ? 'handoff' : 'signing link';
    throw new RefusedError(
      'link_origin_changed',
      origin === undefined
        ? `the ${what} ${id} has no recorded origin and the configured service is ${current}; its token was not sent`
        : `the ${what} ${id} was created on ${origin}, but the configured service is now ${current}; its token was not sent`,
      {
        hint:
          origin === undefined
            ? `create a new link with \`loopsign ${kind === 'handoff' ? 'handoff' : 'sign-link'} --file ask.json\``
            : `read it from where it was made: --base-url ${origin}`,
      },
    );
  }
  const header = kind === 'handoff' ? 'x-rateloop-handoff-token' : 'x-rateloop-signing-intent-token';
  const route = kind === 'handoff' ? `/api/agent/handoffs/${id}` : `/api/agent/signing-intents/${id}`;
  try {
    return await service.http.request<ServiceDoc>({
      method: 'GET',
      path: route,
      headers: { [header]: String(data.token) },
      idempotent: true,
    });
  } catch (error) {
    if (error instanceof ServiceError && (error.details as { status?: number })?.status === 410) {
      throw new ServiceError(
        'link_expired',
        `the ${kind === 'handoff' ? 'handoff link' : 'signing link'} ${id} expired at ${String(data.expiresAt)}`,
        {
          hint: `create a new one with \`loopsign ${kind === 'handoff' ? 'handoff' : 'sign-link'} --file ask.json\``,
          details: { status: 410 },
        },
      );
    }
    throw error;
  }
}

export const handoffStatus = (ctx: Context, id: string) => linkStatus(ctx, 'handoff', id);
export const signingLinkStatus = (ctx: Context, id: string) => linkStatus(ctx, 'signing-intent', id);
