// File helpers shared by the keystore, the journal and exports: private modes and atomic writes, so a crash
// never leaves a half-written file behind.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import writeFileAtomic from 'write-file-atomic';
import { UsageError } from './errors.js';

export const PRIVATE_FILE = 0o600;
export const PRIVATE_DIR = 0o700;

export async function ensurePrivateDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: PRIVATE_DIR });
  await fs.chmod(dir, PRIVATE_DIR);
}

/** Atomically replace (or create) a file: temp file, fsync, rename. */
export async function writeFileAtomically(file: string, data: string | Uint8Array, mode = PRIVATE_FILE): Promise<void> {
  await writeFileAtomic(file, typeof data === "string" ? data : Buffer.from(data), { mode, fsync: true });
}

/**
 * Atomically create a file that must not exist yet. write-file-atomic always renames over the target, so the
 * no-clobber case links a fully written temp file into place: link() fails with EEXIST instead of replacing.
 */
export async function createFileAtomically(file: string, data: string | Uint8Array, mode = PRIVATE_FILE): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await fs.open(tmp, 'wx', mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.link(tmp, file);
  } finally {
    await fs.unlink(tmp).catch(() => undefined);
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
    throw new UsageError('invalid_json', `${what} ${file} is not valid JSON: ${(error as Error).message}`);
  }
}
