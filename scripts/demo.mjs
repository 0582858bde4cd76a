// npm run demo: walks a newcomer through loopsign with the built binary in a throwaway home.
// Until the sandbox lands this is the keystore round trip: create, show, export, re-import, unlock.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'loopsign.js');
const home = mkdtempSync(path.join(tmpdir(), 'loopsign-demo-'));
const env = {
  ...process.env,
  HOME: home,
  XDG_CONFIG_HOME: path.join(home, 'config'),
  XDG_DATA_HOME: path.join(home, 'data'),
  XDG_STATE_HOME: path.join(home, 'state'),
  LOOPSIGN_PASSWORD: undefined,
};
const passwordFile = path.join(home, 'password.txt');
writeFileSync(passwordFile, 'demo password, throwaway\n', { mode: 0o600 });

const steps = [];
function step(title, args) {
  console.log(`\n== ${title}\n$ loopsign ${args.join(' ')}`);
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'inherit', 'inherit'] });
  steps.push({ title, ms: Date.now() - t0, code: r.status });
  if (r.status !== 0) {
    console.error(`step failed with exit code ${r.status}`);
    process.exit(1);
  }
}

try {
  step('create an encrypted wallet', ['wallet', 'new', '--password-file', passwordFile]);
  step('show its address (no unlock needed)', ['wallet', 'address']);
  step('back it up, still encrypted', ['wallet', 'export', '--out', path.join(home, 'backup.json')]);
  step('import the backup as a second keystore', ['--keystore', path.join(home, 'second.json'), 'wallet', 'import', '--keystore-file', path.join(home, 'backup.json'), '--password-file', passwordFile]);
  step('read the second keystore: the same address', ['--keystore', path.join(home, 'second.json'), '--password-file', passwordFile, '--json', 'wallet', 'address']);
  step('show the resolved configuration', ['config', 'show']);
  console.log('\nsummary');
  for (const s of steps) console.log(`  ${s.title.padEnd(56)} ${String(s.ms).padStart(6)} ms  exit ${s.code}`);
} finally {
  rmSync(home, { recursive: true, force: true });
}
