// Gated content (chain.md §9, service-api.md §8.6): accept the confidentiality terms with a checked wallet
// signature, then read the gated context the service lists. The terms text is shown in full (and kept in a file)
// before anything is signed; the context read is the service's and stays marked untrusted.
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Hex, LocalAccount } from 'viem';
import type { Context } from '../context.js';
import { isLoopbackHost } from '../config.js';
import type { RefusedCode } from '../error-codes.js';
import { RefusedError, ServiceError, UsageError } from '../errors.js';
import { ensurePrivateDir, writeFileAtomically } from '../fsutil.js';
import { MAX_IMAGE_BYTES } from '../images/check.js';
import { termsDir, type LoopsignPaths } from '../paths.js';
import { discardBody, readCapped } from '../service/cap.js';
import { httpRequest } from '../service/node-http.js';
import { isDoc, objectField, type ServiceDoc } from '../service/doc.js';
import type { McpClient, ToolArgs } from '../service/mcp.js';
import { checkTermsMessage, type CheckedTerms } from '../wallet/terms-guard.js';

/** How long one gated read may take, start to end (a stalled or trickling host is given up on). */
export const GATED_TIMEOUT_MS = 30_000;
/** Byte caps per kind: details are text (the live limit is far below), images at most the upload limit. */
export const GATED_MAX_BYTES: Record<string, number> = { details: 1024 * 1024, image: MAX_IMAGE_BYTES };

export interface TermsRecord {
  version: string;
  uri: string;
  docHash: string;
  /** The full text as signed, saved 0600 under the state dir: what the user agreed to, for the record. */
  file: string;
  /** SHA-256 hex of the file's bytes (the UTF-8 text). */
  sha256: string;
}

/** One gated resource the rating context lists, its URL checked (checkGatedUrl); the rest as the service said it. */
export interface GatedUrl {
  kind: 'image' | 'details';
  url: URL;
  /** The listed SHA-256 (compared with the bytes read), or null when none is listed. */
  sha256: string | null;
  /** The service's own name for it, passed through to the output unread. */
  resourceId: unknown;
}

/** What was read of one gated resource: its hash, and for details the text (the service's, marked untrusted). */
export interface GatedItem {
  kind: 'image' | 'details';
  resourceId: unknown;
  sha256: string;
  verified: boolean;
  bytes: number;
  untrusted: true;
  text?: string;
}

export interface GatedOptions {
  accept: boolean;
  /** The configured service base URL: gated reads go to its origin only. */
  serviceBaseUrl: string;
}

async function saveTerms(t: CheckedTerms, paths: LoopsignPaths): Promise<TermsRecord> {
  const dir = termsDir(paths);
  await ensurePrivateDir(dir);
  const file = path.join(dir, `confidentiality-terms-${t.version}-${t.docHash.slice(0, 16)}.txt`);
  await writeFileAtomically(file, t.text);
  const sha256 = createHash('sha256').update(t.text, 'utf8').digest('hex');
  return { version: t.version, uri: t.uri, docHash: t.docHash, file, sha256 };
}

/**
 * The person's answer: at an MCP host through elicitation, with the whole text (an agent's argument cannot accept
 * terms for them); else on a terminal, where the text was just printed. False when there is nobody to ask (piped,
 * --json, an MCP client that cannot elicit).
 */
async function personAccepts(ctx: Context, about: string, terms: CheckedTerms, record: TermsRecord): Promise<boolean> {
  if (ctx.askPerson) {
    return ctx.askPerson({
      title: `Accept the confidentiality terms ${terms.version} (your wallet signs them)`,
      message: `loopsign asks you, not your agent: ${about}. Accepting them signs the terms message with your wallet. The full terms (saved to ${record.file}, sha256 ${record.sha256}):\n\n${terms.text}`,
    });
  }
  if (ctx.out.json || process.stdin.isTTY !== true || process.stderr.isTTY !== true) return false;
  const { confirm } = await import('@inquirer/prompts');
  return confirm({ message: 'Accept these terms (your wallet signs them)?', default: false }, { output: process.stderr });
}

export async function acceptTermsAndFetch(
  ctx: Context,
  mcp: McpClient,
  account: LocalAccount,
  wallet: Hex,
  args: ToolArgs & { contentId: string },
  context: ServiceDoc,
  opts: GatedOptions,
): Promise<{ terms?: TermsRecord; context: GatedItem[] }> {
  let session: unknown;
  let terms: TermsRecord | undefined;
  // Where the context will be read from is checked first: a listed URL off the service's origin is refused before
  // any terms are signed or any read session exists.
  const urls = gatedUrls(context, opts.serviceBaseUrl);
  const first = await mcp.call('rateloop_accept_confidentiality_terms', args);
  if (first.status === 'signature_required') {
    // The payload hash binds the service's stored record of the question (content/details/metadata/media hashes)
    // and its operator frontend, which the challenge does not carry: it is checked for form only (terms-guard.ts).
    const checked = checkTermsMessage(first.message, { wallet, stated: first });
    terms = await saveTerms(checked, ctx.paths);
    const about = `question ${args.contentId} is gated: its context is shared only under the confidentiality terms ${checked.version} (${checked.uri})`;
    // The whole text, before anything is decided: on a terminal it is printed; under --json it is in the file.
    if (!ctx.out.json) ctx.out.note(`${about}. The full terms (also saved to ${terms.file}):\n\n${checked.text}\n`);
    ctx.out.progress('rate.terms_text', `the full terms text is in ${terms.file} (sha256 ${terms.sha256})`, {
      termsFile: terms.file,
      termsSha256: terms.sha256,
      termsVersion: checked.version,
      termsDocHash: checked.docHash,
    });
    const accepted = opts.accept || (await personAccepts(ctx, about, checked, terms));
    if (!accepted) {
      throw new UsageError('terms_not_accepted', `${about}; nothing was signed`, {
        hint: ctx.askPerson
          ? `the terms were put to you and not accepted; read the full text in ${terms.file} and accept it when your host asks again`
          : `read the full text in ${terms.file}, then rerun with --yes to accept it (the wallet signs the terms message); over MCP, the host must support elicitation to ask you`,
        details: {
          termsFile: terms.file,
          termsSha256: terms.sha256,
          termsVersion: checked.version,
          termsUri: checked.uri,
          termsDocHash: checked.docHash,
        },
      });
    }
    ctx.out.progress('rate.terms', `accepting the confidentiality terms ${checked.version} for question ${args.contentId}`);
    const signature = await account.signMessage({ message: checked.message });
    const second = await mcp.call('rateloop_accept_confidentiality_terms', { ...args, challengeId: first.challengeId, signature });
    session = objectField(second, 'signedReadSession')?.cookieHeader;
  } else {
    session = objectField(first, 'signedReadSession')?.cookieHeader;
  }
  const cookieHeader = readSession(session);
  const out: GatedItem[] = [];
  for (const u of urls) out.push(await readGated(u, wallet, cookieHeader));
  return { terms, context: out };
}

/** The read session's cookie: none, or one plain name=value pair (anything else would be sent as a header). */
function readSession(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && /^[A-Za-z0-9_.-]{1,100}=[A-Za-z0-9_.-]{1,200}$/.test(value)) return value;
  throw new ServiceError('invalid_read_session', 'the service returned a read session that is not a plain name=value cookie');
}

/**
 * The gated resources a rating context lists (content.gatedContext.fetch.urls; none when absent), each URL checked
 * against the service's origin. A list that is not a list of {url, kind} objects has no URL loopsign could check:
 * refused as a listed URL that is not one (exit 5), before any terms are signed.
 */
export function gatedUrls(context: ServiceDoc, serviceBaseUrl: string): GatedUrl[] {
  const list = objectField(objectField(objectField(context, 'content'), 'gatedContext'), 'fetch')?.urls;
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw gatedRefused('gated_url_refused', 'the gated context the service listed is not a list of URLs');
  return list.map((u: unknown) => {
    if (!isDoc(u))
      throw gatedRefused('gated_url_refused', 'the gated context the service listed holds an entry that is not a {url, kind} object');
    const kind = u.kind === 'image' ? 'image' : 'details';
    return {
      kind,
      url: checkGatedUrl(u.url, serviceBaseUrl, kind),
      sha256: u.sha256 === undefined || u.sha256 === null ? null : String(u.sha256),
      resourceId: u.resourceId,
    };
  });
}

/**
 * A gated URL loopsign will read: on the configured service's origin exactly (scheme, host and port), https — or
 * plain http only when that origin is itself a loopback one (the sandbox) — and without credentials in the URL. The
 * read session goes nowhere else. A URL on any other origin is refused (exit 5), nothing is sent.
 */
export function checkGatedUrl(raw: unknown, serviceBaseUrl: string, kind: string): URL {
  const base = new URL(serviceBaseUrl);
  let url: URL;
  try {
    url = new URL(String(raw));
  } catch {
    throw gatedRefused('gated_url_refused', `the gated ${kind} URL the service listed is not a URL`);
  }
  const secure = url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
  if (url.origin !== base.origin || !secure) {
    throw gatedRefused(
      'gated_url_refused',
      `the gated ${kind} is listed on ${url.protocol}//${url.host}, not on the service's origin ${base.origin}; loopsign reads gated context (and sends the read session) only there`,
    );
  }
  if (url.username !== '' || url.password !== '') throw gatedRefused('gated_url_refused', `the gated ${kind} URL carries credentials`);
  url.hash = '';
  return url;
}

function gatedRefused(code: RefusedCode, message: string): RefusedError {
  return new RefusedError(code, message, { hint: 'nothing was read from there and the read session was not sent there; no vote was sent' });
}

async function readGated(u: GatedUrl, wallet: Hex, cookieHeader: string | undefined): Promise<GatedItem> {
  const kind = u.kind;
  const url = new URL(u.url);
  url.searchParams.set('address', wallet);
  const where = `${url.origin}${url.pathname}`;
  let res;
  try {
    // A redirect is never followed (it is the answer, refused below); headers and body each have a deadline and
    // the whole read one more.
    res = await httpRequest(url, {
      method: 'GET',
      headers: cookieHeader ? { cookie: cookieHeader } : {},
      headersTimeoutMs: GATED_TIMEOUT_MS,
      bodyTimeoutMs: GATED_TIMEOUT_MS,
      signal: AbortSignal.timeout(GATED_TIMEOUT_MS),
    });
  } catch (error) {
    throw new ServiceError('gated_fetch_failed', `cannot read the gated ${kind} at ${where}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (res.status >= 300 && res.status < 400) {
    discardBody(res.body);
    let target = 'elsewhere';
    try {
      const to = new URL(res.header('location') ?? '', url);
      target = `to ${to.protocol}//${to.host}`;
    } catch {
      // no usable Location: "elsewhere"
    }
    throw gatedRefused(
      'gated_redirect_refused',
      `the gated ${kind} at ${where} answered ${res.status}, a redirect ${target}; loopsign does not follow redirects for gated context`,
    );
  }
  if (res.status < 200 || res.status >= 300) {
    discardBody(res.body);
    throw new ServiceError('gated_fetch_failed', `the gated ${kind} at ${where} answered ${res.status}`);
  }
  let bytes: Buffer;
  try {
    bytes = await readCapped(res.body, GATED_MAX_BYTES[kind]!, `the gated ${kind} at ${where}`, res.header('content-length'));
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    throw new ServiceError('gated_fetch_failed', `reading the gated ${kind} at ${where} failed: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const sha = `0x${createHash('sha256').update(bytes).digest('hex')}`;
  if (u.sha256 !== null && u.sha256.toLowerCase() !== sha)
    throw new RefusedError('gated_hash_mismatch', `the gated ${kind} does not match its listed sha256`);
  const item: GatedItem = {
    kind,
    resourceId: u.resourceId,
    sha256: sha,
    verified: u.sha256 !== null,
    bytes: bytes.length,
    untrusted: true,
  };
  // The service's text, as it came: marked untrusted, and made inert by the output layer in human mode.
  if (kind === 'details') item.text = bytes.toString('utf8');
  return item;
}
