// upload-image: for each file, local checks, prepare, the signed-message guard with the payload hash recomputed
// from the file and the wallet, the signature, the upload, the moderation status until approved or rejected, and
// the checks on the returned URL (image-url.ts). Both hashes are kept: the file's (signed) and the stored WebP's
// (in the URL). A failed file does not stop the others.
import type { Hex } from 'viem';
import type { Context } from '../context.js';
import { LoopsignError, ServiceError, UsageError, type Code, type ExitCodeValue } from '../errors.js';
import { Operation, operationId, readOperation } from '../store/operation.js';
import { paidRound } from '../ask/prepare.js';
import { checkSignedAction } from '../wallet/message-guard.js';
import { checkImage, precheckImage, ratioHint, type CheckedImage } from './check.js';
import { acceptUploadView, checkImageUrl, type StoredImage } from './image-url.js';

export interface UploadResult {
  file: string;
  ok: boolean;
  attachmentId?: string;
  imageUrl?: string;
  /** SHA-256 of the file as sent (the signed upload message covers it). */
  sha256?: string;
  /** SHA-256 of the WebP the service stored (the URL's #sha256= fragment). */
  storedSha256?: string;
  sizeBytes?: number;
  width?: number;
  height?: number;
  hint?: string;
  reused?: boolean;
  error?: { code: Code; message: string; exitCode: ExitCodeValue };
}

export interface Uploader {
  upload(file: string, attachmentId?: string): Promise<UploadResult>;
  close(): Promise<void>;
}

export async function uploader(ctx: Context): Promise<Uploader> {
  const settings = await paidRound(ctx);
  await ctx.service({ spends: true }); // an upload signs: the service origin must be named, never defaulted
  const signer = await ctx.wallet();
  const wallet = signer.address.toLowerCase() as Hex;
  const serviceUrl = settings.baseUrl.value!;
  const mcp = await ctx.mcp();
  const chainId = settings.chain.chainId;

  /** This wallet's earlier upload of the same bytes, when its journaled URL still passes every check here. */
  function reusable(cached: Record<string, unknown> | undefined): StoredImage | undefined {
    if (!cached?.imageUrl || typeof cached.attachmentId !== 'string') return undefined;
    try {
      return checkImageUrl(cached.imageUrl, { serviceUrl, attachmentId: cached.attachmentId });
    } catch {
      return undefined; // another service origin (or an edited journal): upload again
    }
  }

  async function one(img: CheckedImage, attachmentId?: string): Promise<UploadResult> {
    // An image this wallet already uploaded (a rerun of an interrupted ask) is not uploaded again.
    const cacheId = operationId('image', [chainId, wallet, img.sha256]);
    const store = await ctx.store();
    const cached = attachmentId === undefined ? reusable(readOperation(store, 'image', cacheId)?.data) : undefined;
    if (cached)
      return {
        file: img.file,
        ok: true,
        attachmentId: cached.attachmentId,
        imageUrl: cached.imageUrl,
        sha256: img.sha256,
        storedSha256: cached.storedSha256,
        sizeBytes: img.sizeBytes,
        reused: true,
      };
    ctx.out.progress('image.prepare', `preparing the upload of ${img.filename} (${img.sizeBytes} bytes)`);
    const prepared = await mcp.call('rateloop_prepare_image_upload', {
      filename: img.filename,
      mimeType: img.mimeType,
      sha256: img.sha256,
      sizeBytes: img.sizeBytes,
      walletAddress: wallet,
      ...(attachmentId ? { attachmentId } : {}),
    });
    const id = String(prepared.attachmentId);
    if (!/^att_[A-Za-z0-9_-]{16,80}$/.test(id))
      throw new ServiceError('invalid_response', `the service returned a malformed attachment id ${id}`);
    // The payload hash covers the original bytes (their SHA-256 and size), never the WebP the service will store.
    const message = checkSignedAction(prepared.message, {
      action: 'attachments:upload_image',
      wallet,
      payloadParts: [wallet, id, img.filename, img.mimeType, img.sizeBytes, img.sha256],
    });
    const signature = await (await signer.account).signMessage({ message });
    ctx.out.progress('image.upload', `uploading ${img.filename}`);
    let view = await mcp.callWithBase64(
      'rateloop_upload_image',
      {
        attachmentId: id,
        challengeId: prepared.challengeId,
        filename: img.filename,
        mimeType: img.mimeType,
        sha256: img.sha256,
        sizeBytes: img.sizeBytes,
        signature,
        walletAddress: wallet,
      },
      'imageBase64',
      img.bytes,
    );
    for (let i = 0; i < 60 && ['uploading', 'processing'].includes(String(view.status)); i++) {
      await new Promise((r) => setTimeout(r, 1000));
      view = await mcp.call('rateloop_get_image_upload_status', { attachmentId: id });
    }
    const stored = acceptUploadView(view, { serviceUrl, attachmentId: id, filename: img.filename });
    const j = await Operation.open(store, 'image', cacheId, { chainId, wallet, data: {} });
    await j.setStep('uploaded', {
      attachmentId: id,
      imageUrl: stored.imageUrl,
      sha256: img.sha256,
      storedSha256: stored.storedSha256,
      origin: new URL(serviceUrl).origin,
    });
    await j.close();
    return {
      file: img.file,
      ok: true,
      attachmentId: id,
      imageUrl: stored.imageUrl,
      sha256: img.sha256,
      storedSha256: stored.storedSha256,
      sizeBytes: img.sizeBytes,
      width: stored.width,
      height: stored.height,
      hint: ratioHint(img),
    };
  }

  return {
    async upload(file, attachmentId) {
      try {
        return await one(await checkImage(file), attachmentId);
      } catch (error) {
        if (!(error instanceof LoopsignError)) throw error;
        return { file, ok: false, error: { code: error.code, message: error.message, exitCode: error.exitCode } };
      }
    },
    close: () => mcp.close(),
  };
}

/** Check every file first (so a bad one is refused before any network call), then upload one at a time. */
export async function uploadImages(ctx: Context, files: string[], attachmentId?: string): Promise<UploadResult[]> {
  if (files.length === 0) throw new UsageError('usage', 'give at least one image file');
  if (attachmentId !== undefined && files.length > 1) throw new UsageError('usage', '--attachment-id applies to a single file');
  const results: UploadResult[] = [];
  const good: string[] = [];
  for (const f of files) {
    try {
      await precheckImage(f); // the header only: the bytes are read once, at upload time, one file at a time
      good.push(f);
    } catch (error) {
      if (!(error instanceof LoopsignError)) throw error;
      results.push({ file: f, ok: false, error: { code: error.code, message: error.message, exitCode: error.exitCode } });
    }
  }
  if (good.length) {
    const up = await uploader(ctx);
    try {
      for (const f of good) results.push(await up.upload(f, attachmentId));
    } finally {
      await up.close();
    }
  }
  return files.map((f) => results.find((r) => r.file === f)!);
}

/**
 * The ask-file extension `question.imageFiles: ["shot.png", …]` (paths relative to the ask file): every file is
 * checked before any network call, uploaded (or reused when this wallet uploaded it before, so a resumed ask keeps
 * its payload), and replaced by its URL in `question.imageUrls`.
 */
export async function resolveImageFiles(
  ctx: Context,
  body: Record<string, unknown>,
  askFile: string,
  folder: string,
): Promise<Record<string, unknown>> {
  const path = await import('node:path');
  const out = structuredClone(body);
  const questions = (Array.isArray(out.questions) ? out.questions : out.question ? [out.question] : []) as Record<string, unknown>[];
  const jobs: { q: Record<string, unknown>; file: string }[] = [];
  for (const q of questions) {
    if (q.imageFiles === undefined) continue;
    if (!Array.isArray(q.imageFiles) || q.imageFiles.some((f) => typeof f !== 'string'))
      throw new UsageError('invalid_ask', `${askFile}: question.imageFiles must be an array of file paths`);
    // Named in an ask an agent may have written (a file, or inline): read only where this run may read (an MCP
    // server's roots). Relative paths: from the ask file's folder, or for an inline ask the working directory.
    for (const f of q.imageFiles as string[])
      jobs.push({ q, file: await ctx.files.check(path.resolve(folder, f), 'an image the ask names') });
  }
  if (jobs.length === 0) return out;
  for (const j of jobs) await precheckImage(j.file);
  const up = await uploader(ctx);
  try {
    for (const j of jobs) {
      const r = await up.upload(j.file);
      if (!r.ok) throw LoopsignError.again(r.error!, r.error!.message);
      j.q.imageUrls = [...((j.q.imageUrls as string[] | undefined) ?? []), r.imageUrl!];
    }
  } finally {
    await up.close();
  }
  for (const q of questions) delete q.imageFiles;
  return out;
}
