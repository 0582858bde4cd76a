// Local checks on an image before anything is sent: readable, a file, 1 byte … 10 MB, JPEG/PNG/WEBP by its magic
// bytes (never by extension); then size, SHA-256 and, when the header tells, the dimensions (for the 16:9 hint).
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../errors.js';

export const MAX_IMAGE_BYTES = 10_485_760;

export interface CheckedImage {
  file: string;
  filename: string;
  bytes: Buffer;
  mimeType: 'image/jpeg' | 'image/png' | 'image/webp';
  sizeBytes: number;
  sha256: string;
  width?: number;
  height?: number;
}

export function sniffMime(b: Buffer): CheckedImage['mimeType'] | undefined {
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return undefined;
}

export function dimensions(b: Buffer, mime: string): { width: number; height: number } | undefined {
  try {
    if (mime === 'image/png' && b.length >= 24) return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
    if (mime === 'image/webp' && b.length >= 30) {
      const chunk = b.toString('latin1', 12, 16);
      if (chunk === 'VP8X') return { width: 1 + b.readUIntLE(24, 3), height: 1 + b.readUIntLE(27, 3) };
      if (chunk === 'VP8 ') return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
      if (chunk === 'VP8L') {
        const bits = b.readUInt32LE(21);
        return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
      }
    }
    if (mime === 'image/jpeg') {
      let i = 2;
      while (i + 9 < b.length) {
        if (b[i] !== 0xff) return undefined;
        const marker = b[i + 1]!;
        const len = b.readUInt16BE(i + 2);
        if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker))
          return { height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7) };
        i += 2 + len;
      }
    }
  } catch {
    // a truncated header: no dimensions
  }
  return undefined;
}

/** The checks that need no full read: existence, kind, size, and the magic bytes of the first 64 KiB. */
export async function precheckImage(file: string): Promise<void> {
  const handle = await statAndOpen(file);
  try {
    const head = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    if (!sniffMime(head.subarray(0, bytesRead))) {
      throw new UsageError('image_unsupported', `${file} is not a JPEG, PNG or WEBP image (checked by its content, not its name)`, {
        hint: 'convert it to PNG, JPEG or WEBP',
      });
    }
  } finally {
    await handle.close();
  }
}

async function statAndOpen(file: string) {
  let stat;
  try {
    stat = await fs.stat(file);
  } catch {
    throw new UsageError('image_not_found', `${file}: no such file`);
  }
  if (stat.isDirectory()) throw new UsageError('image_not_a_file', `${file} is a directory, not an image file`);
  if (!stat.isFile()) throw new UsageError('image_not_a_file', `${file} is not a regular file`);
  if (stat.size === 0) throw new UsageError('image_empty', `${file} is empty`);
  if (stat.size > MAX_IMAGE_BYTES)
    throw new UsageError('image_too_large', `${file} is ${stat.size} bytes; images may be at most 10 MB (${MAX_IMAGE_BYTES} bytes)`);
  try {
    return await fs.open(file, 'r');
  } catch (error) {
    throw new UsageError('image_unreadable', `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

export async function checkImage(file: string): Promise<CheckedImage> {
  const handle = await statAndOpen(file);
  let bytes: Buffer;
  try {
    bytes = await handle.readFile();
  } catch (error) {
    throw new UsageError('image_unreadable', `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  } finally {
    await handle.close();
  }
  const mimeType = sniffMime(bytes);
  if (!mimeType) {
    throw new UsageError('image_unsupported', `${file} is not a JPEG, PNG or WEBP image (checked by its content, not its name)`, {
      hint: 'convert it to PNG, JPEG or WEBP',
    });
  }
  const dims = dimensions(bytes, mimeType);
  return {
    file,
    filename: path.basename(file).slice(0, 180),
    bytes,
    mimeType,
    sizeBytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    ...dims,
  };
}

/** A hint (never a refusal) when a new public image is far from 16:9. */
export function ratioHint(img: CheckedImage): string | undefined {
  if (!img.width || !img.height) return undefined;
  const r = img.width / img.height;
  return Math.abs(r - 16 / 9) / (16 / 9) > 0.05
    ? `${img.filename} is ${img.width}x${img.height}; 16:9 is preferred for new public images (other ratios are accepted)`
    : undefined;
}
