// Artifacts as the review routes take them: files read whole and bounded, their media type detected from the bytes
// (never the file name) unless the user names one, reduced to `type/subtype` as the service stores it (§6.4).
import { readBoundedFile, type BoundedReadProblem } from '../bounded-read.js';
import { UsageError } from '../errors.js';
import { sniffMime } from '../images/check.js';

// The service's artifact limit (10 MiB decoded); the 64 KiB request cap is checked on the body that would be sent.
export const MAX_ARTIFACT_BYTES = 10 * 1024 * 1024;

export async function readArtifact(file: string, flag: string, maxBytes = MAX_ARTIFACT_BYTES): Promise<Buffer> {
  const problem = (p: BoundedReadProblem): UsageError => {
    switch (p.kind) {
      case 'unreadable':
        return new UsageError('file_not_found', `${flag} ${file} cannot be read (${p.code})`);
      case 'not_a_file':
        return new UsageError('not_a_file', `${flag} ${file} is not a file`);
      case 'empty':
        return new UsageError('empty_file', `${flag} ${file} is empty; an artifact needs at least one byte`);
      case 'too_large':
        return new UsageError(
          'file_too_large',
          `${flag} ${file} is ${p.size} bytes; the service takes at most 10 MiB per artifact (and 64 KiB per request, base64 included)`,
        );
    }
  };
  return readBoundedFile(file, maxBytes, problem, { refuseEmpty: true });
}

function utf8(b: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(b);
  } catch {
    return undefined;
  }
}

/** The media type the bytes show: images and PDF by their magic, JSON and text when they decode as UTF-8. */
export function detectMediaType(b: Buffer): string {
  const image = sniffMime(b);
  if (image) return image;
  if (b.length >= 5 && b.toString('latin1', 0, 5) === '%PDF-') return 'application/pdf';
  if (b.length >= 6 && /^GIF8[79]a$/.test(b.toString('latin1', 0, 6))) return 'image/gif';
  const text = utf8(b);
  if (text === undefined || text.includes('\u0000')) return 'application/octet-stream';
  const t = text.trim();
  if (t.startsWith('{') || t.startsWith('[')) {
    try {
      JSON.parse(t);
      return 'application/json';
    } catch {
      // text that merely starts like JSON
    }
  }
  return 'text/plain';
}

const TOKEN = '[a-z0-9!#$&^_.+-]+';
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}$`);

/** A user's media type, as the service normalises it: lower case, `type/subtype`, parameters dropped. */
export function mediaTypeOption(value: string, flag: string): string {
  const essence = value.split(';')[0]!.trim().toLowerCase();
  if (!MEDIA_TYPE.test(essence) || essence.length > 160)
    throw new UsageError(
      'invalid_media_type',
      `${flag} ${JSON.stringify(value.slice(0, 80))} is not a media type (type/subtype, e.g. text/plain)`,
    );
  return essence;
}

/** Reviewer-visible text (the evaluate/request payloads): exact UTF-8, 1 … 3,000 characters. */
export async function readPayload(file: string, flag: string): Promise<string> {
  const bytes = await readArtifact(file, flag, 16_384);
  const text = utf8(bytes);
  if (text === undefined) throw new UsageError('not_utf8', `${flag} ${file} is not UTF-8 text; review payloads are text`);
  if (text.length > 3000)
    throw new UsageError('payload_too_long', `${flag} ${file} is ${text.length} characters; the service takes at most 3,000`);
  return text;
}
