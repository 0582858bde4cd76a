// File helpers shared by the keystore, the journal and exports: private modes and atomic writes, so a crash
// never leaves a half-written file behind.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import writeFileAtomic from 'write-file-atomic';
import { UsageError } from './errors.js';
import { jsonProblem } from './json-problem.js';

export const PRIVATE_FILE = 0o600;
export const PRIVATE_DIR = 0o700;

export async function ensurePrivateDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: PRIVATE_DIR });
  await fs.chmod(dir, PRIVATE_DIR);
}

/** Atomically replace (or create) a file: temp file, fsync, rename. */
export async function writeFileAtomically(file: string, data: string | Uint8Array, mode = PRIVATE_FILE): Promise<void> {
  await writeFileAtomic(file, typeof data === 'string' ? data : Buffer.from(data), { mode, fsync: true });
}

/** A fully written, synced temp file next to `file` (same directory, so a rename or link stays atomic). */
async function writeTempBeside(file: string, data: string | Uint8Array, mode: number): Promise<string> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await fs.open(tmp, 'wx', mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return tmp;
}

/**
 * Atomically create a file that must not exist yet. write-file-atomic always renames over the target, so the
 * no-clobber case links a fully written temp file into place: link() fails with EEXIST instead of replacing.
 */
export async function createFileAtomically(file: string, data: string | Uint8Array, mode = PRIVATE_FILE): Promise<void> {
  const tmp = await writeTempBeside(file, data, mode);
  try {
    await fs.link(tmp, file);
  } finally {
    await fs.unlink(tmp).catch(() => undefined);
  }
}

/**
 * Whether writeFileNoFollow would refuse `file` (a link, a directory, or an existing file without `replace`):
 * commands check before doing work whose result could then not be saved. True when the file exists.
 */
export async function refuseUnwritable(file: string, options: { replace: boolean; replaceFlag: string }): Promise<boolean> {
  const existing = await fs.lstat(file).catch(() => undefined);
  if (existing?.isSymbolicLink())
    throw new UsageError('symlink_refused', `${file} is a symbolic link; loopsign does not write through links`, {
      hint: 'remove the link or choose another path',
    });
  if (existing && !existing.isFile()) throw new UsageError('not_a_file', `${file} exists and is not a file`);
  if (existing && !options.replace)
    throw new UsageError('file_exists', `${file} already exists; it was not changed`, {
      hint: `pass ${options.replaceFlag} to replace it, or choose another path`,
    });
  return existing !== undefined;
}

/**
 * Atomically write a file at exactly this path: a symlink there is refused (never followed, unlike
 * writeFileAtomically, which resolves links), and an existing file is replaced only when `replace` is set.
 * The caller names the flag that allows replacing, for the message.
 */
export async function writeFileNoFollow(
  file: string,
  data: string | Uint8Array,
  options: { replace: boolean; replaceFlag: string; mode?: number },
): Promise<void> {
  const mode = options.mode ?? PRIVATE_FILE;
  const existing = await refuseUnwritable(file, options);
  if (!existing) {
    try {
      await createFileAtomically(file, data, mode);
      return;
    } catch (error) {
      // Created by someone else since the check: the same refusal, never a silent overwrite.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return writeFileNoFollow(file, data, options);
      throw error;
    }
  }
  // Replace: a fresh temp file renamed over the name; rename replaces the entry itself and follows no link.
  const tmp = await writeTempBeside(file, data, mode);
  try {
    await fs.rename(tmp, file);
  } catch (error) {
    await fs.unlink(tmp).catch(() => undefined);
    throw error;
  }
}

export async function fileExists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch {
    return false;
  }
}

/** Read and parse a JSON file given by the user; problems become one clear usage error naming the file. */
export async function readUserJson(file: string, what: string, maxBytes = 16 * 1024 * 1024): Promise<unknown> {
  let text: string;
  try {
    const stat = await fs.stat(file);
    if (stat.isDirectory()) throw new UsageError('not_a_file', `${what} ${file} is a directory, not a file`);
    if (stat.size > maxBytes) {
      throw new UsageError('file_too_large', `${what} ${file} is ${stat.size} bytes; the limit is ${maxBytes}`);
    }
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new UsageError('file_not_found', `${what} ${file} does not exist`);
    if (code === 'EACCES') throw new UsageError('file_unreadable', `${what} ${file} is not readable (permission denied)`);
    throw new UsageError('file_unreadable', `cannot read ${what} ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError('invalid_json', `${what} ${file} is ${jsonProblem(error, text)}`);
  }
}
