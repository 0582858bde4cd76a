// Cross-process file locks (proper-lockfile), with the owner's PID kept beside the lock so that a lock left by a
// process that died (a crash, a SIGKILL) is taken over at once instead of blocking until it goes stale.
import { promises as fs } from 'node:fs';
import lockfile from 'proper-lockfile';

const LOCK_OPTIONS = { realpath: false, stale: 60_000, update: 10_000, retries: 0 } as const; // lock dir: `${file}.lock`
const RETRY_MS = 50;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Try once: the lock, or undefined when a live process holds it. A dead owner's lock is removed and taken. */
async function tryLock(file: string, pidFile: string): Promise<(() => Promise<void>) | undefined> {
  try {
    return await lockfile.lock(file, LOCK_OPTIONS);
  } catch (error) {
    // Only a held lock is waited for or taken over; anything else (a missing folder, no permission) is an error.
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
    const owner = Number((await fs.readFile(pidFile, 'utf8').catch(() => '')).trim());
    if (!Number.isInteger(owner) || owner <= 0 || owner === process.pid || alive(owner)) return undefined;
    // proper-lockfile only releases locks it took in this process: the dead owner's lock directory goes.
    await fs.rm(`${file}.lock`, { recursive: true, force: true });
    return lockfile.lock(file, LOCK_OPTIONS).catch(() => undefined);
  }
}

/**
 * Lock `file` for this process. With `waitMs` > 0, wait up to that long for a live holder to finish; then (or at
 * once with 0) throw `locked()`. Returns the release function.
 */
export async function acquireLock(file: string, options: { waitMs?: number; locked: () => Error }): Promise<() => Promise<void>> {
  const pidFile = `${file}.pid`;
  const deadline = Date.now() + (options.waitMs ?? 0);
  let release = await tryLock(file, pidFile);
  while (!release) {
    if (Date.now() >= deadline) throw options.locked();
    await new Promise((r) => setTimeout(r, RETRY_MS));
    release = await tryLock(file, pidFile);
  }
  await fs.writeFile(pidFile, String(process.pid), { mode: 0o600 });
  const taken = release;
  return async () => {
    await fs.rm(pidFile, { force: true });
    await taken();
  };
}
