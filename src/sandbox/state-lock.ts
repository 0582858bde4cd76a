// One sandbox per state folder: a second one would start another chain, overwrite the first's dev wallet, API key and
// session cookie, and on stopping delete the first's manifest. The folder is claimed by a file naming the process
// (its pid, start time and boot: src/store/process-identity.ts), created exclusively; a claim whose process no longer
// runs (a crash, a reboot) is taken over.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../errors.js';
import { currentProcess, isRunning, type ProcessIdentity } from '../store/process-identity.js';

const LOCK = 'sandbox.lock';

async function holderOf(file: string): Promise<ProcessIdentity | undefined> {
  try {
    const raw = JSON.parse(await fs.readFile(file, 'utf8')) as Partial<ProcessIdentity>;
    if (typeof raw.pid !== 'number') return undefined;
    return { pid: raw.pid, started: String(raw.started ?? ''), boot: String(raw.boot ?? '') };
  } catch {
    return undefined;
  }
}

/** Claims `stateDir` for this process, or refuses (exit 2) naming the running sandbox's pid. Returns the release. */
export async function claimStateDir(stateDir: string): Promise<() => Promise<void>> {
  const file = path.join(stateDir, LOCK);
  const me = currentProcess();
  for (let attempt = 0; ; attempt++) {
    try {
      await fs.writeFile(file, JSON.stringify(me) + '\n', { flag: 'wx', mode: 0o600 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 3) throw error;
    }
    const holder = await holderOf(file);
    if (holder && isRunning(holder)) {
      throw new UsageError(
        'sandbox_already_running',
        `a sandbox already runs with the state folder ${stateDir} (pid ${holder.pid}); it was left as it is`,
        {
          hint: `use that sandbox (its manifest is ${path.join(stateDir, 'manifest.json')}), stop it first (kill ${holder.pid}), or give another --state-dir`,
          details: { pid: holder.pid, stateDir },
        },
      );
    }
    // A claim of a process that is gone (or a file half written by one): taken over.
    await fs.rm(file, { force: true });
  }
  return async () => {
    const holder = await holderOf(file);
    if (holder?.pid === me.pid && holder.started === me.started) await fs.rm(file, { force: true });
  };
}
