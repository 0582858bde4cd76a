// npm run demo: a guided run of loopsign with the built binary, in a throwaway home, against a fresh sandbox.
// It stops the sandbox (and so anvil) at the end, leaving nothing running.
import { spawn, spawnSync } from 'node:child_process';
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
};
delete env.LOOPSIGN_PASSWORD;
const passwordFile = path.join(home, 'password.txt');
writeFileSync(passwordFile, 'demo password, throwaway\n', { mode: 0o600 });

const steps = [];
function step(title, args, extraEnv = {}) {
  console.log(`\n== ${title}\n$ loopsign ${args.join(' ')}`);
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [bin, ...args], { env: { ...env, ...extraEnv }, stdio: ['ignore', 'inherit', 'inherit'] });
  steps.push({ title, ms: Date.now() - t0, code: r.status });
  if (r.status !== 0) throw new Error(`step "${title}" failed with exit code ${r.status}`);
}

async function startSandbox() {
  const stateDir = path.join(home, 'sandbox');
  const child = spawn(process.execPath, [bin, '--json', 'sandbox', '--state-dir', stateDir, '--auto-advance'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const info = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]));
    });
    child.on('exit', (code) => reject(new Error(`sandbox exited with ${code}`)));
  });
  return { child, info };
}

let sandbox;
try {
  step('create an encrypted wallet', ['wallet', 'new', '--password-file', passwordFile]);
  step('show its address (no unlock needed)', ['wallet', 'address']);
  step('back it up, still encrypted', ['wallet', 'export', '--out', path.join(home, 'backup.json')]);
  console.log('\n== start a local sandbox (anvil, contracts, drand beacon, service, keeper)');
  const t0 = Date.now();
  sandbox = await startSandbox();
  steps.push({ title: 'start the sandbox', ms: Date.now() - t0, code: 0 });
  console.log(`sandbox at ${sandbox.info.baseUrl}, chain ${sandbox.info.chainId}, RPC ${sandbox.info.rpcUrl}`);
  const sbEnv = {
    LOOPSIGN_CHAIN_ID: '31337',
    LOOPSIGN_SANDBOX_MANIFEST: sandbox.info.manifest,
    LOOPSIGN_KEYSTORE: sandbox.info.devWallet.keystore,
    LOOPSIGN_PASSWORD_FILE: sandbox.info.devWallet.passwordFile,
  };
  step("the sandbox's funded dev wallet", ['wallet', 'balance'], sbEnv);
  step('the trust anchors loopsign uses on the sandbox chain', ['config', 'show'], sbEnv);
  console.log('\nsummary');
  for (const s of steps) console.log(`  ${s.title.padEnd(56)} ${String(s.ms).padStart(6)} ms  exit ${s.code}`);
} catch (error) {
  console.error(`\ndemo failed: ${error.message}`);
  process.exitCode = 1;
} finally {
  if (sandbox) {
    sandbox.child.kill('SIGTERM');
    await new Promise((r) => sandbox.child.once('exit', r));
  }
  rmSync(home, { recursive: true, force: true });
}
