// CI (.ci/run): the package as a user gets it. Packs this checkout (prepack builds dist/), installs the tarball
// globally into a throwaway prefix with `npm i -g --prefix`, and from a folder outside the repository, in a
// throwaway home, runs: --version, --help, the sandbox (start, its ready document, SIGTERM, nothing left running),
// verify-evidence on the vendored example packet with its pin, one quote and one paid ask against that sandbox, and
// the spending `history` shows. Prints the
// tarball's size and contents. Exits non-zero on the first failure.
//
//   node scripts/smoke-package.mjs [--tarball FILE] [--keep]
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageProblems } from './package-files.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const given = args.includes('--tarball') ? path.resolve(args[args.indexOf('--tarball') + 1]) : undefined;
const keep = args.includes('--keep');
const version = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version;
const tmp = mkdtempSync(path.join(tmpdir(), 'loopsign-package-'));
const started = []; // PIDs this script started, stopped by PID at the end
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function step(name) {
  process.stdout.write(`package: ${name}\n`);
}

function fail(message) {
  throw new Error(`package smoke test failed: ${message}`);
}

let tarball = given;
let summary;
try {
  if (!tarball) {
    step('npm pack (prepack builds dist/)');
    const out = execFileSync(npm, ['pack', '--json', '--pack-destination', tmp], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const doc = JSON.parse(out.slice(out.indexOf('[')))[0];
    tarball = path.join(tmp, doc.filename);
    const files = doc.files.map((f) => f.path);
    const problems = packageProblems(files);
    if (problems.length) fail(`the tarball ${problems.join('; ')}`);
    const groups = {};
    for (const f of files) {
      const parts = f.split('/');
      const g = parts.length === 1 ? f : parts.length === 2 ? `${parts[0]}/*` : `${parts[0]}/${parts[1]}/`;
      groups[g] = (groups[g] ?? 0) + 1;
    }
    summary = `${doc.filename}: ${(doc.size / 1024).toFixed(0)} KiB packed, ${(doc.unpackedSize / 1024).toFixed(0)} KiB unpacked, ${files.length} files`;
    step(summary);
    step(
      `contents: ${Object.entries(groups)
        .map(([g, n]) => `${g} (${n})`)
        .join(', ')}`,
    );
  }

  // As a user installs it: install scripts run (better-sqlite3's fetches or compiles loopsign's SQLite; sharp's and
  // esbuild's are not needed, and package.json's allowScripts says so).
  step(`npm i -g --prefix <tmp> ${path.basename(tarball)}`);
  const prefix = path.join(tmp, 'prefix');
  execFileSync(npm, ['install', '-g', '--prefix', prefix, tarball, '--no-audit', '--no-fund'], {
    cwd: tmp,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const bin = path.join(prefix, 'bin', 'loopsign');
  if (!existsSync(bin)) fail(`no ${bin} after the install`);
  step("sharp (the sandbox's image decoder) loads its prebuilt binary without its install script");
  const sharpDir = path.join(prefix, 'lib', 'node_modules', 'loopsign', 'node_modules', 'sharp');
  const webp = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const { default: sharp } = await import(${JSON.stringify(path.join(sharpDir, 'lib', 'index.js'))}); process.stdout.write(String((await sharp({ create: { width: 2, height: 2, channels: 3, background: '#f00' } }).webp().toBuffer()).length));`,
    ],
    { encoding: 'utf8' },
  );
  if (!(Number(webp) > 0)) fail('sharp did not encode an image');

  // A folder outside the repository, a home of its own: nothing of the checkout or of this user is used.
  const outside = path.join(tmp, 'outside');
  const home = path.join(tmp, 'home');
  mkdirSync(outside, { recursive: true });
  mkdirSync(home, { recursive: true });
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, 'config'),
    XDG_DATA_HOME: path.join(home, 'data'),
    XDG_STATE_HOME: path.join(home, 'state'),
    LANG: 'C.UTF-8',
  };
  const run = (argv, extra = {}) => {
    try {
      return {
        code: 0,
        stdout: execFileSync(bin, argv, {
          cwd: outside,
          env: { ...env, ...extra },
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
          timeout: 120_000,
        }),
      };
    } catch (error) {
      return { code: error.status ?? -1, stdout: String(error.stdout ?? ''), stderr: String(error.stderr ?? '') };
    }
  };

  step('loopsign --version');
  const v = run(['--version']);
  if (v.code !== 0 || v.stdout.trim() !== version) fail(`--version: exit ${v.code}, ${JSON.stringify(v.stdout)}`);
  step('loopsign --help');
  const h = run(['--help']);
  if (h.code !== 0 || !h.stdout.startsWith('Usage: loopsign')) fail(`--help: exit ${h.code}`);

  step('loopsign verify-evidence on the vendored example packet, with its pin');
  const vectors = path.join(root, 'test', 'fixtures', 'vectors');
  copyFileSync(path.join(vectors, 'synthetic-evidence-v4.json'), path.join(outside, 'packet.json'));
  copyFileSync(path.join(vectors, 'synthetic-evidence-v4.spki.txt'), path.join(outside, 'key.spki.txt'));
  const ev = run(['--json', 'verify-evidence', 'packet.json', '--public-key', 'key.spki.txt']);
  if (ev.code !== 0 || JSON.parse(ev.stdout).valid !== true) fail(`verify-evidence: exit ${ev.code}: ${ev.stdout}${ev.stderr ?? ''}`);

  step('loopsign sandbox: start, ready document');
  const stateDir = path.join(tmp, 'sandbox');
  const sandbox = spawn(bin, ['--json', 'sandbox', '--state-dir', stateDir], { cwd: outside, env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(sandbox.pid);
  let stderr = '';
  sandbox.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => sandbox.on('exit', (code, signal) => resolve({ code, signal })));
  const ready = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the sandbox printed no ready document in 60 s:\n${stderr}`)), 60_000);
    sandbox.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      if (out.includes('\n')) {
        clearTimeout(timer);
        resolve(JSON.parse(out.split('\n')[0]));
      }
    });
    sandbox.on('exit', (code) => reject(new Error(`the sandbox exited with ${code}:\n${stderr}`)));
  });
  if (ready.ok !== true || ready.chainId !== 31337 || !existsSync(ready.manifest))
    fail(`the ready document: ${JSON.stringify(ready).slice(0, 300)}`);
  started.push(ready.pids.anvil);

  step('loopsign quote against the sandbox');
  const ask = {
    chainId: 31337,
    clientRequestId: `package-smoke-${process.pid}`,
    maxPaymentAmount: '1500000',
    bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
    roundConfig: { questionDurationSeconds: '1200', minVoters: '3', maxVoters: '100' },
    question: { title: 'Does the installed package quote?', contextUrl: 'https://example.com/context', categoryId: '1', tags: ['smoke'] },
  };
  writeFileSync(path.join(outside, 'ask.json'), JSON.stringify(ask, null, 2));
  const sbEnv = {
    LOOPSIGN_CHAIN_ID: '31337',
    LOOPSIGN_SANDBOX_MANIFEST: ready.manifest,
    LOOPSIGN_KEYSTORE: ready.devWallet.keystore,
    LOOPSIGN_PASSWORD_FILE: ready.devWallet.passwordFile,
  };
  const q = run(['--json', 'quote', '--file', 'ask.json'], sbEnv);
  const quote = q.code === 0 ? JSON.parse(q.stdout) : undefined;
  if (!quote?.ok || quote.amounts?.total?.display !== '1.5 USDC') fail(`quote: exit ${q.code}: ${q.stdout}${q.stderr ?? ''}`);

  // The money path needs loopsign's database (better-sqlite3's native SQLite): an ask paid, and the spending it shows.
  step("loopsign ask against the sandbox, then history (the installed package's database)");
  const a = run(['--json', 'ask', '--file', 'ask.json', '--payment-mode', 'wallet_calls'], sbEnv);
  const asked = a.code === 0 ? JSON.parse(a.stdout) : undefined;
  if (asked?.status !== 'submitted') fail(`ask: exit ${a.code}: ${a.stdout}${a.stderr ?? ''}`);
  const shown = run(['--json', 'history'], sbEnv);
  const spent = shown.code === 0 ? JSON.parse(shown.stdout) : undefined;
  if (spent?.totals?.[0]?.display !== '1.5 USDC') fail(`history: exit ${shown.code}: ${shown.stdout}${shown.stderr ?? ''}`);

  step('SIGTERM to the sandbox: it stops, and nothing is left running');
  sandbox.kill('SIGTERM');
  const end = await Promise.race([exited, new Promise((r) => setTimeout(() => r(undefined), 20_000))]);
  if (!end) fail('the sandbox did not stop within 20 s of SIGTERM');
  if (end.code !== 143) fail(`the sandbox exited with ${end.code} (signal ${end.signal}) after SIGTERM, not 143:\n${stderr}`);
  await new Promise((r) => setTimeout(r, 500));
  for (const pid of [ready.pids.sandbox, ready.pids.anvil]) {
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch {
      alive = false;
    }
    if (alive) fail(`process ${pid} is still running after the sandbox stopped`);
  }
  if (existsSync(ready.manifest)) fail('the manifest is still there after the sandbox stopped');
  step(`ok${summary ? ` (${summary})` : ''}`);
} finally {
  for (const pid of started) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  if (!keep) rmSync(tmp, { recursive: true, force: true });
}
