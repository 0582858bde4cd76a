// Gated content (chain.md §9, service-api.md §8.6): accept the confidentiality terms with a checked wallet
// signature, then read the gated context the service lists. The text read is the service's and stays untrusted.
import { createHash } from 'node:crypto';
import type { Hex } from 'viem';
import type { privateKeyToAccount } from 'viem/accounts';
import type { Context } from '../context.js';
import { RefusedError, ServiceError, UsageError } from '../errors.js';
import type { McpClient } from '../service/mcp.js';
import { checkSignedAction } from '../wallet/message-guard.js';

type Json = Record<string, any>;

export async function acceptTermsAndFetch(ctx: Context, mcp: McpClient, account: ReturnType<typeof privateKeyToAccount>, wallet: Hex, args: Json, context: Json, accept: boolean): Promise<Json[]> {
  const terms = context.content.gatedContext ?? {};
  let cookieHeader: string | undefined;
  const first = await mcp.call('rateloop_accept_confidentiality_terms', args);
  if (first.status === 'signature_required') {
    if (!accept) {
      throw new UsageError('terms_not_accepted', `question ${String(args.contentId)} is gated: its context is shared only under the confidentiality terms (${String(first.termsUri ?? terms.termsUri)}, version ${String(first.termsVersion ?? terms.termsVersion)})`, {
        hint: 'read them, then rerun with --yes to accept them (the wallet signs the terms message)',
      });
    }
    const message = checkSignedAction(first.message, { action: 'confidentiality_terms:accept', wallet });
    // The terms lines must hash to the document hash the service reports.
    const line = (name: string) => message.split('\n').find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2) ?? '';
    const docHash = createHash('sha256').update(`${line('Terms Version')}\n${line('Terms URI')}\n${line('Terms')}`).digest('hex');
    if (docHash !== line('Terms Hash') || (first.termsDocHash && first.termsDocHash !== docHash)) {
      throw new RefusedError('message_refused', 'refused to sign: the terms text in the message does not hash to the stated terms hash');
    }
    ctx.out.progress('rate.terms', `accepting the confidentiality terms ${line('Terms Version')} for question ${String(args.contentId)}`);
    const signature = await account.signMessage({ message });
    const second = await mcp.call('rateloop_accept_confidentiality_terms', { ...args, challengeId: first.challengeId, signature });
    cookieHeader = second.signedReadSession?.cookieHeader;
  } else {
    cookieHeader = first.signedReadSession?.cookieHeader;
  }
  const urls = (context.content.gatedContext?.fetch?.urls ?? []) as Json[];
  const out: Json[] = [];
  for (const u of urls) {
    const url = new URL(String(u.url));
    url.searchParams.set('address', wallet);
    const res = await fetch(url, { headers: cookieHeader ? { cookie: cookieHeader } : {} });
    if (!res.ok) throw new ServiceError('gated_fetch_failed', `the gated ${String(u.kind)} at ${url.origin}${url.pathname} answered ${res.status}`);
    const bytes = Buffer.from(await res.arrayBuffer());
    const sha = `0x${createHash('sha256').update(bytes).digest('hex')}`;
    if (u.sha256 && String(u.sha256).toLowerCase() !== sha) throw new RefusedError('gated_hash_mismatch', `the gated ${String(u.kind)} does not match its listed sha256`);
    out.push({ kind: u.kind, resourceId: u.resourceId, sha256: sha, verified: Boolean(u.sha256), bytes: bytes.length, text: u.kind === 'details' ? bytes.toString('utf8') : undefined });
  }
  return out;
}
