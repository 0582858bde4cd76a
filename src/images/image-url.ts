// What an upload answer may say (service-api.md §8.5; live corpus images.json). The service re-encodes every upload
// to WebP (quality 88, EXIF orientation applied, no metadata) and the `#sha256=` fragment of the returned URL is the
// hash of those stored bytes — not of the file sent, and not predictable by the client (it depends on the service's
// libwebp). So loopsign checks what it can know — the URL is on the configured service's origin, names the
// attachment this upload was prepared for, and has exactly the form …/api/attachments/images/<id>.webp#sha256=0x<hex>
// — and records both hashes: the original's (which the signed upload message covers) and the stored one (which
// asks carry). A URL that fails a check is refused (exit 5) and never put into an ask.
import type { RefusedCode } from '../error-codes.js';
import { RefusedError, ServiceError } from '../errors.js';

const FRAGMENT = /^#sha256=0x([0-9a-f]{64})$/;
const ATTACHMENT_PATH = /^\/api\/attachments\/images\/(att_[A-Za-z0-9_-]{16,80})\.webp$/;

export interface StoredImage {
  imageUrl: string;
  attachmentId: string;
  /** SHA-256 of the stored WebP, from the URL's fragment. */
  storedSha256: string;
  width?: number;
  height?: number;
}

export interface UrlExpectation {
  /** The configured service base URL; the image must live on its origin. */
  serviceUrl: string;
  /** The attachment id the upload was prepared (and signed) for. */
  attachmentId: string;
}

function refuse(code: RefusedCode, message: string): never {
  throw new RefusedError(code, `${message}; the image URL was not kept or used`, {
    hint: 'nothing was paid; check the configured service (--base-url) and upload again',
  });
}

export function checkImageUrl(value: unknown, expect: UrlExpectation): StoredImage {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    refuse('image_url_malformed', 'the service returned an image URL that is not a URL');
  }
  const origin = new URL(expect.serviceUrl).origin;
  if (url.origin !== origin)
    refuse('image_url_foreign_origin', `the image URL is on ${url.origin}, not on the configured service ${origin}`);
  if (url.username || url.password || url.search) refuse('image_url_malformed', 'the image URL carries credentials or a query string');
  const path = ATTACHMENT_PATH.exec(url.pathname);
  if (!path) refuse('image_url_malformed', `the image URL path ${url.pathname} is not /api/attachments/images/<attachment id>.webp`);
  if (path[1] !== expect.attachmentId)
    refuse(
      'image_url_wrong_attachment',
      `the image URL names attachment ${path[1]}, not ${expect.attachmentId} that this upload was signed for`,
    );
  const digest = FRAGMENT.exec(url.hash);
  if (!digest) refuse('image_url_malformed', "the image URL does not end in #sha256=0x<64 lowercase hex> (the stored image's hash)");
  return { imageUrl: `${origin}${url.pathname}${url.hash}`, attachmentId: expect.attachmentId, storedSha256: digest[1]! };
}

/**
 * The final answer of an upload (or of its status): approved with a checked URL, or the service's refusal. A bad
 * image is HTTP 200 with `status: "failed"` and an `error` (a GIF declared as PNG, a corrupt file): exit 3 with the
 * service's reason.
 */
export function acceptUploadView(view: Record<string, unknown>, expect: UrlExpectation & { filename: string }): StoredImage {
  if (view.attachmentId !== undefined && view.attachmentId !== expect.attachmentId) {
    refuse('image_url_wrong_attachment', `the upload answer is for attachment ${String(view.attachmentId)}, not ${expect.attachmentId}`);
  }
  if (view.status !== 'approved') {
    const reason = typeof view.error === 'string' && view.error ? `: ${view.error}` : '';
    throw new ServiceError('image_rejected', `${expect.filename} was not approved (${String(view.status)}${reason})`, {
      hint: 'upload another image',
    });
  }
  const stored = checkImageUrl(view.imageUrl, expect);
  const dim = (v: unknown) => (Number.isSafeInteger(v) && (v as number) > 0 ? (v as number) : undefined);
  return { ...stored, width: dim(view.width), height: dim(view.height) };
}
