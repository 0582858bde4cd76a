// Global setup of the projects that run the built binary (cli, e2e): builds dist/ only when something the build
// reads is newer than the last build, so `npm test` after an edit tests the edit and a second run starts at once.
// scripts/build.mjs --if-stale decides, once it holds the checkout's build lock: two runs started together build once,
// the second waiting for the first and then using its build; a build beside a run (npm pack's) replaces dist/ file by
// file, never removing one a test is about to load. The unit project imports src/ through vitest and needs no build at all.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export default function setup(): void {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs'), '--if-stale'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0)
    throw new Error(`the build failed (scripts/build.mjs, exit ${r.status ?? r.signal}); the cli and e2e tests run the built binary`);
}
