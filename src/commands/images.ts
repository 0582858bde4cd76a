// loopsign upload-image | handoff | handoff status | sign-link | sign-link status (docs/images.md)
import type { Context } from '../context.js';
import { LoopsignError } from '../errors.js';
import { serviceDocument } from '../output.js';
import type { UploadResult } from '../images/upload.js';
import type { HandoffOptions, SignLinkOptions, UploadImageOptions } from './images.def.js';

export async function uploadImage(ctx: Context, options: UploadImageOptions, args: unknown[]): Promise<void> {
  const { uploadImages } = await import('../images/upload.js');
  const files = (args[0] as string[] | undefined) ?? [];
  const results = await uploadImages(ctx, files, options.attachmentId);
  ctx.out.result(uploadDocument(ctx, results), () =>
    results.map((r) => `${r.imageUrl}${r.reused ? '  (already uploaded)' : ''}`).join('\n'),
  );
}

/**
 * The document `upload-image --json` prints (and `loopsign_upload_image` returns), with each file's hint as a
 * warning; when any file failed, the error both give (every file was tried; the exit code is the first failure's).
 */
export function uploadDocument(ctx: Context, results: UploadResult[]): Record<string, unknown> {
  for (const r of results) if (r.hint) ctx.out.warn(r.hint);
  const failed = results.filter((r) => !r.ok);
  if (failed.length) {
    const first = failed[0]!.error!;
    for (const r of results) ctx.out.note(r.ok ? `ok    ${r.file} → ${r.imageUrl}` : `FAIL  ${r.file}: ${r.error!.message}`);
    throw LoopsignError.again(first, `${failed.length} of ${results.length} image(s) failed: ${first.message}`, { details: { results } });
  }
  return { images: results };
}

export async function handoff(ctx: Context, options: HandoffOptions): Promise<void> {
  const { createHandoff } = await import('../images/links.js');
  const r = await createHandoff(ctx, String(options.file), options.image ?? [], options.ttl);
  ctx.out.result(
    r,
    () =>
      `open this link in the browser of the wallet's owner (expires ${String(r.expiresAt)}):\n${String(r.handoffUrl)}\nstatus: loopsign handoff status ${String(r.handoffId)}`,
  );
}

export async function handoffStatus(ctx: Context, _options: unknown, args: unknown[]): Promise<void> {
  const { handoffStatus: status } = await import('../images/links.js');
  const r = await status(ctx, String(args[0]));
  ctx.out.result(
    serviceDocument(r, { handoffId: String(args[0]) }),
    () => `handoff ${String(r.id)}: ${String(r.status)} (expires ${String(r.expiresAt)})`,
  );
}

export async function signLink(ctx: Context, options: SignLinkOptions): Promise<void> {
  const { createSigningLink } = await import('../images/links.js');
  const r = await createSigningLink(ctx, String(options.file), options.ttl);
  ctx.out.result(
    r,
    () =>
      `signing link (expires ${String(r.expiresAt)}):\n${String(r.signingUrl)}\nstatus: loopsign sign-link status ${String(r.intentId)}`,
  );
}

export async function signLinkStatus(ctx: Context, _options: unknown, args: unknown[]): Promise<void> {
  const { signingLinkStatus: status } = await import('../images/links.js');
  const r = await status(ctx, String(args[0]));
  ctx.out.result(
    serviceDocument(r, { intentId: String(args[0]) }),
    () => `signing intent ${String(r.id)}: ${String(r.status)} (expires ${String(r.expiresAt)})`,
  );
}
