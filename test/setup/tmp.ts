// Global setup of every project: the run's temporary files go in one folder of their own, removed when the run ends.
// Tests make scratch folders with mkdtemp(tmpdir()) (stores, homes, exports, sandboxes' state) and the programs they
// start inherit TMPDIR; a run used to leave some fifty of them in /tmp. It is set here, in vitest's main process,
// before any worker starts, so workers and every process under them see it. The three projects share the one folder;
// it goes when the last project's teardown runs, unless the secrets scan found a leak (it sets the exit code): what
// leaked stays, to be looked at. A run that is killed leaves this one folder, not fifty. A property test that failed
// wrote its failing case's story under property-failures/ (test/helpers/property.ts): that folder stays, the rest goes.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

// Each project loads this module on its own, so what they share lives on globalThis.
const shared = globalThis as { loopsignRunTmp?: { folder: string; users: number } };

export default function setup(): () => void {
  shared.loopsignRunTmp ??= { folder: mkdtempSync(path.join(tmpdir(), 'loopsign-run-')), users: 0 };
  const run = shared.loopsignRunTmp;
  process.env.TMPDIR = run.folder;
  run.users++;
  return () => {
    if (--run.users > 0) return;
    delete shared.loopsignRunTmp;
    const stories = path.join(run.folder, 'property-failures');
    const kept = existsSync(stories);
    if (kept) console.error(`the failing property cases' stories are kept in ${stories}`);
    if (process.exitCode) return;
    if (!kept) return rmSync(run.folder, { recursive: true, force: true });
    for (const e of readdirSync(run.folder))
      if (e !== 'property-failures') rmSync(path.join(run.folder, e), { recursive: true, force: true });
  };
}
