// `npm run build` (also npm pack's prepack, and the cli and e2e projects' global setup, test/setup/build.ts, with
// --if-stale): compile.mjs, bundle.mjs, code-cache.mjs and help-text.mjs, run one build at a time per checkout, each into
// a folder of its own, then moved into place file by file.
//  - One at a time: a lock the kernel holds, a Unix socket this process listens on (on Linux in the abstract namespace,
//    named for the checkout's real path: no file, and it goes when the process does, however it ends; elsewhere a socket
//    file in .tmp/, which a later build removes when nothing answers on it). A second build waits for the first. Two
//    test runs started together in a fresh clone both rebuilt dist/, removing it under each other (ENOENT dist/cli.cjs),
//    and so did npm pack beside a test run.
//  - Into .tmp/build/{build,dist}, then each file renamed over its namesake in build/ and dist/ (a rename replaces
//    a file at once), and only then the files the new build lacks removed: a process running dist/ while a build runs
//    (a test run's loopsign, beside npm pack) finds every file it loads, the old one or the new one.
//  - Last, the stamp (build/.build-stamp, written aside and renamed into place), dated when the build started: a file
//    saved during the build is newer. --if-stale builds only when something the build reads is newer than the stamp,
//    checked once the lock is held, so the run that waited for another's build uses it.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  rmdirSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = path.join(root, 'build', '.build-stamp');
const TMP = path.join(root, '.tmp');
// Everything the build reads: the sources, the compiler settings, the build's scripts (and the loader that writes the
// code caches), and the lock file that fixes the bundled packages' versions.
const INPUTS = [
  'src',
  'tsconfig.json',
  'package.json',
  'package-lock.json',
  'scripts/build.mjs',
  'scripts/compile.mjs',
  'scripts/bundle.mjs',
  'scripts/code-cache.mjs',
  'scripts/help-text.mjs',
  'bin/load-chunks.cjs',
];
const STEPS = ['compile.mjs', 'bundle.mjs', 'code-cache.mjs', 'help-text.mjs'];
// How long a build waits for another before it gives up: a build takes well under a minute, on a loaded machine a few.
const WAIT_MS = 15 * 60_000;

function newest(p) {
  const full = path.join(root, p);
  if (!existsSync(full)) return 0;
  const st = statSync(full);
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs; // a deleted file changes its folder's time
  for (const e of readdirSync(full)) max = Math.max(max, newest(path.join(p, e)));
  return max;
}

/** Why build/ and dist/ must be built again, or undefined when they are the build of what is here now. */
function staleness() {
  if (!existsSync(STAMP)) return 'no build of this checkout was finished';
  if (!existsSync(path.join(root, 'dist', 'cli.cjs'))) return 'dist/cli.cjs is missing';
  const built = statSync(STAMP).mtimeMs;
  for (const p of INPUTS) if (newest(p) > built) return `${p} changed since the last build`;
  return undefined;
}

const lockName =
  process.platform === 'linux'
    ? `\0loopsign-build-${createHash('sha256').update(realpathSync(root)).digest('hex').slice(0, 24)}`
    : path.join(TMP, 'build.sock');

/** Listens on the lock's socket: the server when this process holds the lock, undefined when another does. */
function tryLock() {
  return new Promise((resolve, reject) => {
    const server = net.createServer((c) => c.end(`${process.pid}\n`));
    server.once('error', (error) => {
      if (error.code !== 'EADDRINUSE') return reject(error);
      // Somebody listens, or (a socket file only) a build that died left its file: nothing answers on it.
      const probe = net.connect(lockName);
      probe.once('data', () => probe.destroy());
      probe.once('connect', () => resolve(undefined));
      probe.once('error', (e) => {
        if (lockName.startsWith('\0') || !['ECONNREFUSED', 'ENOENT'].includes(e.code)) return resolve(undefined);
        rmSync(lockName, { force: true });
        resolve(tryLock());
      });
    });
    server.listen(lockName, () => resolve(server));
  });
}

async function lock() {
  mkdirSync(TMP, { recursive: true });
  const until = Date.now() + WAIT_MS;
  let said = false;
  for (;;) {
    const server = await tryLock();
    if (server) return server;
    if (!said) console.log('another build of this checkout is running: waiting for it');
    said = true;
    if (Date.now() > until) throw new Error(`build: another build of ${root} held the lock for ${WAIT_MS / 60_000} minutes`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function filesUnder(dir, rel = '') {
  if (!existsSync(path.join(dir, rel))) return [];
  return readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(dir, path.join(rel, e.name)) : [path.join(rel, e.name)],
  );
}

/** Moves every file of `from` over its namesake in `to`, then removes what `to` has beyond them (but `keep`). */
function install(from, to, keep) {
  const incoming = filesUnder(from);
  for (const f of incoming) {
    const target = path.join(to, f);
    mkdirSync(path.dirname(target), { recursive: true });
    try {
      renameSync(path.join(from, f), target);
    } catch (error) {
      // A folder where a file now goes (or the other way round): the build's layout changed.
      if (!['EISDIR', 'ENOTDIR', 'ENOTEMPTY', 'EEXIST'].includes(error.code)) throw error;
      rmSync(target, { recursive: true, force: true });
      renameSync(path.join(from, f), target);
    }
  }
  const now = new Set(incoming);
  for (const f of filesUnder(to)) if (!now.has(f) && f !== keep) rmSync(path.join(to, f), { force: true });
  const prune = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) prune(path.join(d, e.name));
    if (d !== to && readdirSync(d).length === 0) rmdirSync(d);
  };
  prune(to);
}

const server = await lock();
try {
  const ifStale = process.argv.includes('--if-stale');
  const why = ifStale ? staleness() : 'asked for';
  if (why) {
    if (ifStale) console.log(`building dist/ (${why})`);
    const started = new Date();
    // One name for every build's folder (under the lock no other build runs; what is there is a killed build's): esbuild
    // names each chunk for a hash of its contents and the paths of its modules, so a folder named for the build would
    // give every build other chunk names, and a build beside a test run would remove the files the run is loading.
    const out = path.join(TMP, 'build');
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    for (const step of STEPS) {
      const r = spawnSync(process.execPath, [path.join(root, 'scripts', step)], {
        cwd: root,
        stdio: 'inherit',
        env: { ...process.env, LOOPSIGN_BUILD_OUT: out },
      });
      if (r.status !== 0) throw new Error(`build: scripts/${step} failed (exit ${r.status ?? r.signal})`);
    }
    install(path.join(out, 'build'), path.join(root, 'build'), '.build-stamp');
    install(path.join(out, 'dist'), path.join(root, 'dist'));
    rmSync(out, { recursive: true, force: true });
    const aside = `${STAMP}.${process.pid}`;
    writeFileSync(aside, `${started.toISOString()}\n`);
    utimesSync(aside, started, started);
    renameSync(aside, STAMP);
  }
} finally {
  server.close();
}
