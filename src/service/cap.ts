// Byte caps on what loopsign reads from the service (issue 11 §7): an answer that is too large, or never ends, is
// cut off and reported (exit 3) instead of filling memory. No undici here, so MCP users load no HTTP client for it.
import { ServiceError } from '../errors.js';

/** The most loopsign reads of one service answer unless a caller says otherwise (plans and results are kilobytes). */
export const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

export function responseTooLarge(what: string, maxBytes: number): ServiceError {
  return new ServiceError('response_too_large', `${what} is larger than ${formatBytes(maxBytes)}; loopsign stopped reading it`, {
    hint: 'a service answer is never that large: the service (or something between it and you) is misbehaving; nothing was signed from it',
    details: { maxBytes },
  });
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${+(n / (1024 * 1024)).toFixed(1)} MiB` : n >= 1024 ? `${+(n / 1024).toFixed(1)} KiB` : `${n} bytes`;
}

/** A response body as undici's request and loopsign's fetch (src/service/fetch.ts) give it. */
export type Body = AsyncIterable<Uint8Array> & {
  destroy?: (error?: Error) => unknown;
  on?: (event: 'error', listener: () => void) => unknown;
};

/** Drop a body unread and close its connection (an error the stream raises for it is expected, not a crash). */
export function discardBody(body: Body): void {
  body.on?.('error', () => undefined);
  body.destroy?.();
}

/**
 * Read a whole body, never more than maxBytes: a declared content-length above the cap is refused at once, and a
 * body that keeps coming is cut off at the cap (leaving the loop destroys the stream, closing the connection) — exit 3.
 */
export async function readCapped(body: Body, maxBytes: number, what: string, contentLength?: string | string[]): Promise<Buffer> {
  const declared = Number(Array.isArray(contentLength) ? contentLength[0] : contentLength);
  if (Number.isFinite(declared) && declared > maxBytes) {
    discardBody(body);
    throw responseTooLarge(what, maxBytes);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw responseTooLarge(what, maxBytes);
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }
  return Buffer.concat(chunks, size);
}
