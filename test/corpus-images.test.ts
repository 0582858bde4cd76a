// The live corpus's image uploads (test/fixtures/vectors/live/images.json, made by the service's own code) replayed
// against loopsign's checks and against the sandbox. For every case: the local file check, the upload message that
// loopsign would sign (its payload hash over the ORIGINAL bytes, verified with the corpus's own signature), and what
// loopsign accepts and records from the service's answer (the WebP's hash from the URL beside the file's hash; the
// failed GIF as the service's refusal). The sandbox re-encodes the same inputs to the same stored bytes and answers
// the same. Tampered answers (another origin, another attachment, another form) are refused with exit 5.
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { verifyMessage, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { checkImage } from '../src/images/check.js';
import { acceptUploadView, checkImageUrl } from '../src/images/image-url.js';
import { checkSignedAction } from '../src/wallet/message-guard.js';
import { LoopsignError } from '../src/errors.js';
import { ImageService, reencode } from '../src/sandbox/service/images.js';
import { Hostile } from '../src/sandbox/service/hostile.js';
import { capture } from './helpers/capture.js';
import { readVector } from './helpers/cli.js';

const corpus = readVector('live/images.json');
const SERVICE = 'https://www.rateloop.ai';
const clock = Date.parse(corpus.meta.fixedClock);
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const approved = corpus.cases.filter((c: any) => c.upload.body.status === 'approved');
const failed = corpus.cases.filter((c: any) => c.upload.body.status === 'failed');
// The corpus wallets are the public development accounts 1 and 2 of the standard test mnemonic.
const accounts = [1, 2].map((i) => mnemonicToAccount('test test test test test test test test test test test junk', { addressIndex: i }));

function refusal(fn: () => unknown): LoopsignError {
  try {
    fn();
  } catch (error) {
    if (error instanceof LoopsignError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('live corpus: image uploads', () => {
  it('has the four documented cases (PNG, JPEG with EXIF orientation 6, WebP, a GIF declared as PNG)', () => {
    expect(corpus.cases.map((c: any) => c.id)).toEqual(['png-64x48', 'jpeg-exif-orientation-6', 'webp-1280x720', 'gif-renamed-png']);
    expect(approved).toHaveLength(3);
    expect(failed).toHaveLength(1);
  });

  it.each(corpus.cases.map((c: any) => [c.id, c]))(
    '%s: the upload message loopsign would sign is the one the service verified',
    async (_id, c: any) => {
      const bytes = Buffer.from(c.input.base64, 'base64');
      expect(sha(bytes)).toBe(c.input.sha256);
      const wallet = c.input.walletAddress.toLowerCase();
      const p = c.prepare.arguments;
      // The payload hash covers the original bytes: their size and SHA-256 as sent, never the stored WebP's.
      const message = checkSignedAction(c.prepare.body.message, {
        action: 'attachments:upload_image',
        wallet,
        payloadParts: [wallet, c.prepare.body.attachmentId, p.filename, p.mimeType, bytes.length, sha(bytes)],
        now: clock,
      });
      expect(await verifyMessage({ address: c.input.walletAddress, message, signature: c.signature })).toBe(true);
      // The same message over the stored WebP's hash would be refused.
      if (c.stored) {
        const e = refusal(() =>
          checkSignedAction(c.prepare.body.message, {
            action: 'attachments:upload_image',
            wallet,
            payloadParts: [wallet, c.prepare.body.attachmentId, p.filename, p.mimeType, c.stored.sizeBytes, c.stored.sha256],
            now: clock,
          }),
        );
        expect(e.details).toMatchObject({ rule: 'payload_hash_mismatch' });
      }
      capture.count('live corpus image cases replayed', c.id);
    },
  );

  it.each(approved.map((c: any) => [c.id, c]))(
    '%s: the answer is accepted and both hashes are recorded, the stored one from the URL',
    (_id, c: any) => {
      const stored = acceptUploadView(c.upload.body, {
        serviceUrl: SERVICE,
        attachmentId: c.prepare.body.attachmentId,
        filename: c.input.filename,
      });
      expect(stored.imageUrl).toBe(c.upload.body.imageUrl);
      expect(stored.storedSha256).toBe(c.stored.sha256);
      expect(`sha256=0x${stored.storedSha256}`).toBe(c.fragment);
      // The live service's fragment is not the file's hash: a client that demanded that would fail every upload.
      expect(stored.storedSha256).not.toBe(c.input.sha256);
      expect(sha(Buffer.from(c.stored.webpBase64, 'base64'))).toBe(stored.storedSha256);
      expect({ width: stored.width, height: stored.height }).toEqual({ width: c.stored.width, height: c.stored.height });
    },
  );

  it("the GIF declared as PNG: refused locally before any upload; the service's failed answer is reported as its refusal (exit 3)", async () => {
    const c = failed[0];
    const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-corpus-'));
    const file = path.join(dir, c.input.filename);
    writeFileSync(file, Buffer.from(c.input.base64, 'base64'));
    await expect(checkImage(file)).rejects.toMatchObject({ code: 'image_unsupported', exitCode: 2 });
    expect(c.upload.httpStatus).toBe(200);
    const e = refusal(() =>
      acceptUploadView(c.upload.body, { serviceUrl: SERVICE, attachmentId: c.prepare.body.attachmentId, filename: c.input.filename }),
    );
    expect(e).toMatchObject({ code: 'image_rejected', exitCode: 3 });
    expect(e.message).toContain('failed: Image signature does not match the declared content type.');
  });

  const png = approved[0];
  const expectPng = { serviceUrl: SERVICE, attachmentId: png.prepare.body.attachmentId };
  const tampered: [string, string, string][] = [
    ['another origin', png.upload.body.imageUrl.replace(SERVICE, 'https://rateloop.example-attacker.com'), 'image_url_foreign_origin'],
    ['plain http on the same host', png.upload.body.imageUrl.replace('https:', 'http:'), 'image_url_foreign_origin'],
    [
      'another attachment id',
      png.upload.body.imageUrl.replace('att_livepublicimage0001', 'att_livepublicimage0009'),
      'image_url_wrong_attachment',
    ],
    ['a .png path', png.upload.body.imageUrl.replace('.webp#', '.png#'), 'image_url_malformed'],
    ['a query string', png.upload.body.imageUrl.replace('.webp#', '.webp?variant=full#'), 'image_url_malformed'],
    ['credentials', png.upload.body.imageUrl.replace('https://', 'https://user:pw@'), 'image_url_malformed'],
    ['no fragment', png.upload.body.imageUrl.replace(/#.*$/, ''), 'image_url_malformed'],
    ['a short digest', png.upload.body.imageUrl.slice(0, -2), 'image_url_malformed'],
    [
      'an upper-case digest',
      png.upload.body.imageUrl.replace(/#sha256=0x(.*)$/, (_m: string, h: string) => `#sha256=0x${h.toUpperCase()}`),
      'image_url_malformed',
    ],
    ['another path', `${SERVICE}/uploads/att_livepublicimage0001.webp#${png.fragment}`, 'image_url_malformed'],
    ['not a URL', 'att_livepublicimage0001.webp', 'image_url_malformed'],
  ];
  it.each(tampered)('an answer whose URL has %s is refused (exit 5)', (_what, url, code) => {
    const e = refusal(() => acceptUploadView({ ...png.upload.body, imageUrl: url }, { ...expectPng, filename: 'x.png' }));
    expect(e).toMatchObject({ code, exitCode: 5 });
  });

  it('an answer for another attachment is refused (exit 5), whatever its URL', () => {
    const e = refusal(() =>
      acceptUploadView({ ...png.upload.body, attachmentId: 'att_livepublicimage0009' }, { ...expectPng, filename: 'x.png' }),
    );
    expect(e).toMatchObject({ code: 'image_url_wrong_attachment', exitCode: 5 });
  });

  it('a URL on the configured origin with another host case or a default port is the same origin', () => {
    expect(checkImageUrl(png.upload.body.imageUrl.replace('www.rateloop.ai', 'WWW.RateLoop.ai:443'), expectPng).imageUrl).toBe(
      png.upload.body.imageUrl,
    );
  });
});

describe('live corpus: the sandbox stores and answers as the service does', () => {
  it('runs the sharp the service ran (libvips and libwebp of the corpus)', () => {
    expect({ sharp: sharp.versions.sharp, vips: sharp.versions.vips, webp: sharp.versions.webp }).toEqual({
      sharp: corpus.meta.sharp.sharp,
      vips: corpus.meta.sharp.vips,
      webp: corpus.meta.sharp.webp,
    });
  });

  it.each(approved.map((c: any) => [c.id, c]))('%s: re-encoded to the same WebP bytes', async (_id, c: any) => {
    const out = await reencode(Buffer.from(c.input.base64, 'base64'));
    expect(out.bytes.toString('base64')).toBe(c.stored.webpBase64);
    expect({ sha256: out.sha256, width: out.width, height: out.height }).toEqual({
      sha256: c.stored.sha256,
      width: c.stored.width,
      height: c.stored.height,
    });
  });

  it.each(corpus.cases.map((c: any) => [c.id, c]))('%s: prepare → sign → upload gives the corpus answer', async (_id, c: any) => {
    const service = new ImageService(SERVICE, new Hostile(), () => Math.floor(clock / 1000));
    const account = accounts.find((a) => a.address === c.input.walletAddress)!;
    const prepared = service.prepare(c.prepare.arguments);
    expect(prepared.attachmentId).toBe(c.prepare.body.attachmentId);
    const line = (m: string) => m.split('\n').find((l) => l.startsWith('Payload Hash: '));
    expect(line(prepared.message)).toBe(line(c.prepare.body.message));
    const signature = await account.signMessage({ message: prepared.message });
    const { imageBase64: _elided, ...args } = c.upload.arguments;
    const body = await service.upload({
      ...args,
      challengeId: prepared.challengeId,
      signature: signature as Hex,
      imageBase64: c.input.base64,
    });
    const keys = ['attachmentId', 'status', 'imageUrl', 'width', 'height', 'error', 'moderationStatus'];
    expect(Object.fromEntries(keys.map((k) => [k, body[k]]))).toEqual(Object.fromEntries(keys.map((k) => [k, c.upload.body[k]])));
  });

  it('refuses an upload whose bytes differ from the signed challenge', async () => {
    const c = approved[0];
    const service = new ImageService(SERVICE, new Hostile(), () => 0);
    const prepared = service.prepare(c.prepare.arguments);
    const signature = await accounts[0]!.signMessage({ message: prepared.message });
    const other = Buffer.from(c.input.base64, 'base64');
    other[other.length - 1] ^= 1;
    const { imageBase64: _elided, ...args } = c.upload.arguments;
    await expect(
      service.upload({ ...args, sha256: sha(other), challengeId: prepared.challengeId, signature, imageBase64: other.toString('base64') }),
    ).rejects.toMatchObject({ status: 401, message: 'Invalid signed upload challenge.' });
  });
});
