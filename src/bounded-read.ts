// A small file a user names (a session cookie, an API key, a review artifact), read whole through one open handle,
// so that what was checked (a regular file, not too large) is what is read. Each caller words its own errors.
import { promises as fs } from 'node:fs';

/** What was wrong with the file: it could not be opened (with the system's code), it is not a file, empty, too large. */
export type BoundedReadProblem =
  | { kind: 'unreadable'; code: string }
  | { kind: 'not_a_file' }
  | { kind: 'empty' }
  | { kind: 'too_large'; size: number };

/**
 * The bytes of `file`, a regular file of at most `maxBytes` (and, with `refuseEmpty`, at least one); otherwise the
 * error `fail` makes of the problem. Errors while reading an opened file are not worded here.
 */
export async function readBoundedFile(
  file: string,
  maxBytes: number,
  fail: (problem: BoundedReadProblem) => Error,
  options: { refuseEmpty?: boolean } = {},
): Promise<Buffer> {
  let handle;
  try {
    handle = await fs.open(file, 'r');
  } catch (error) {
    throw fail({ kind: 'unreadable', code: (error as NodeJS.ErrnoException).code ?? 'error' });
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw fail({ kind: 'not_a_file' });
    if (options.refuseEmpty && stat.size === 0) throw fail({ kind: 'empty' });
    if (stat.size > maxBytes) throw fail({ kind: 'too_large', size: stat.size });
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}
