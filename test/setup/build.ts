// Global setup of the projects that run the built binary (cli, e2e): builds dist/ only when something the build
// reads is newer than the last build, so `npm test` after an edit tests the edit and a second run starts at once.
// The unit project imports src/ through vitest and needs no build at all.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// Written after a build that succeeded, dated when that build started: a file saved during the build is newer.
const STAMP = path.join(ROOT, 'dist', '.build-stamp');
// Everything `npm run build` reads (package.json script "build"): the sources, the compiler settings, the scripts that
// bundle the program and render the help text, and the lock file that fixes the bundled packages' versions.
const INPUTS = [
  'src',
  'tsconfig.json',
  'package.json',
  'package-lock.json',
  'scripts/compile.mjs',
  'scripts/bundle.mjs',
  'scripts/help-text.mjs',
];

function newest(p: string): number {
  const full = path.join(ROOT, p);
  if (!existsSync(full)) return 0;
  const st = statSync(full);
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs; // a deleted file changes its folder's time
  for (const e of readdirSync(full)) max = Math.max(max, newest(path.join(p, e)));
  return max;
}

export function buildIsStale(): string | undefined {
  if (!existsSync(STAMP)) return 'dist/ was not built by this setup';
  const built = statSync(STAMP).mtimeMs;
  for (const p of INPUTS) if (newest(p) > built) return `${p} changed since the last build`;
  return undefined;
}

export default function setup(): void {
  const why = buildIsStale();
  if (!why) return;
  console.log(`building dist/ (${why})`);
  const started = new Date();
  const r = spawnSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`npm run build failed (exit ${r.status}); the cli and e2e tests run the built binary`);
  writeFileSync(STAMP, `${started.toISOString()}\n`);
  utimesSync(STAMP, started, started);
}
