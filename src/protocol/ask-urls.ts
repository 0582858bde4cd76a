// The URL rules an ask's hashes depend on (chain.md §6.1 as corrected; the live corpus is the oracle): what each
// URL field must be, and the exact text the service records for it. The client and the sandbox share them.
import { AskFieldError } from './ask-errors.js';

const DIRECT_IMAGE = /\.(?:avif|bmp|gif|jpe?g|png|svg|webp)$/i;
const IMAGE_PATH = /^(?:\/.*)?\/api\/attachments\/images\/(att_[A-Za-z0-9_-]{16,80})\.webp$/;
const IMAGE_FRAGMENT = /^#sha256=0x([a-fA-F0-9]{64})$/;
export const HOSTED_DETAILS_PATH = /^(?:\/.*)?\/api\/attachments\/details\/det_[A-Za-z0-9_-]{16,80}$/;

const LOOPBACK = ['127.0.0.1', 'localhost', '[::1]'];
const isLoopback = (url: URL) => LOOPBACK.includes(url.hostname);

/** A trimmed URL string that parses, has no credentials, and uses https (or plain http on loopback when allowed). */
function parseUrl(value: unknown, field: string, allowLoopbackHttp = false): URL {
  if (typeof value !== 'string' || value.trim() === '') throw new AskFieldError(field, 'must be an https URL');
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new AskFieldError(field, `"${value}" is not a valid URL`);
  }
  if (url.protocol !== 'https:' && !(allowLoopbackHttp && url.protocol === 'http:' && isLoopback(url)))
    throw new AskFieldError(field, 'must use https');
  if (url.username || url.password) throw new AskFieldError(field, 'must not include credentials');
  return url;
}

const matchesHost = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`);

/** The video id of a YouTube link: `v=` on youtube.com or any subdomain, youtu.be/<id>, /embed/<id>. */
export function youTubeId(url: URL): string | undefined {
  const host = url.hostname.toLowerCase();
  let id: string | null | undefined;
  if (matchesHost(host, 'youtube.com') && url.searchParams.has('v')) id = url.searchParams.get('v');
  else if (host === 'youtu.be') id = url.pathname.slice(1).split('/')[0];
  else if (matchesHost(host, 'youtube.com') && url.pathname.startsWith('/embed/')) id = url.pathname.split('/embed/')[1]?.split('/')[0];
  return id && /^[\w-]+$/.test(id) ? id : undefined;
}

/**
 * contextUrl: a page (not a direct image). YouTube links become https://www.youtube.com/watch?v=<id>; any other URL
 * becomes https://<host, lower case, without "www."><path without trailing "/", or "/"><query> — the port and the
 * fragment are dropped, path and query keep their case.
 */
export function normalizeContextUrl(value: unknown, field = 'question.contextUrl'): string {
  const url = parseUrl(value, field);
  if (DIRECT_IMAGE.test(url.pathname))
    throw new AskFieldError(
      field,
      'must be a page, not a direct image file (upload images with `loopsign upload-image` and use question.imageUrls)',
    );
  const id = youTubeId(url);
  if (id) return `https://www.youtube.com/watch?v=${id}`;
  const host = url.hostname.toLowerCase().replace(/^www\./, '');
  return `https://${host}${url.pathname.replace(/\/+$/, '') || '/'}${url.search}`;
}

/** videoUrl: a YouTube link, recorded as given (only the URL parser's own normal form: host case, default port). */
export function normalizeVideoUrl(value: unknown, field = 'question.videoUrl'): string {
  const url = parseUrl(value, field);
  if (!youTubeId(url)) throw new AskFieldError(field, 'must be a supported YouTube URL (youtube.com/watch?v=…, youtu.be/…, /embed/…)');
  return url.toString();
}

/** detailsUrl: https (loopback http for the sandbox), recorded in the URL parser's normal form (host lower-cased). */
export function normalizeDetailsUrl(value: unknown, field = 'question.detailsUrl'): string {
  return parseUrl(value, field, true).toString();
}

/** A service-hosted details attachment (…/api/attachments/details/det_…), on the service's origin when known. */
export function isHostedDetailsUrl(value: string, serviceOrigin?: string): boolean {
  try {
    const url = new URL(value);
    if (url.search || url.hash || !HOSTED_DETAILS_PATH.test(url.pathname)) return false;
    return serviceOrigin === undefined || url.origin === new URL(serviceOrigin).origin;
  } catch {
    return false;
  }
}

/**
 * imageUrls: an image the service stored for an upload — …/api/attachments/images/att_<id>.webp#sha256=0x<64 hex>
 * (the fragment is required and recorded lower-case), on the service's origin when known.
 */
export function normalizeImageUrl(value: unknown, field: string, serviceOrigin?: string): string {
  const url = parseUrl(value, field, true);
  if (serviceOrigin !== undefined && url.origin !== new URL(serviceOrigin).origin) {
    throw new AskFieldError(
      field,
      `must be an image uploaded to the service (${new URL(serviceOrigin).origin}/api/attachments/images/...); upload it with \`loopsign upload-image\``,
    );
  }
  if (!IMAGE_PATH.test(url.pathname) || url.search) {
    throw new AskFieldError(
      field,
      'must be a service attachment URL …/api/attachments/images/att_<id>.webp#sha256=0x<hash> (see `loopsign upload-image`)',
    );
  }
  const m = IMAGE_FRAGMENT.exec(url.hash);
  if (!m) throw new AskFieldError(field, 'must end in the fragment #sha256=0x<64 hex> the upload returned');
  url.hash = `sha256=0x${m[1]!.toLowerCase()}`;
  return url.toString();
}
