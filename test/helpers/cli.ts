// Runs the built binary as a subprocess, as a user would, in an isolated XDG home. Every run's stdout and stderr
// are scanned for known secrets (test private keys and passwords): a leak fails the test that caused it. Runs,
// homes and secrets are also captured for the scan of everything after the whole run (test/setup/secrets-scan.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { capture } from './capture.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'bin', 'loopsign.js');
// Vendored copies of the workspace's shared vectors (test/fixtures/README.md): tests read nothing outside the repository.
export const VECTORS = path.resolve(ROOT, 'test', 'fixtures', 'vectors');

export const TEST_PRIVATE_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
export const TEST_ADDRESS = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
export const VECTOR_PASSWORD = 'correct horse battery staple';

const secrets = new Set<string>();

/** Register a value that must never appear in anything loopsign prints or writes outside its keystore. */
export function registerSecret(value: string): void {
  const v = value.replace(/^0x/, '');
  if (!secrets.has(v)) capture.secret(v);
  secrets.add(v);
}
registerSecret(TEST_PRIVATE_KEY);
registerSecret(VECTOR_PASSWORD);

export function findSecret(text: string): string | undefined {
  const lower = text.toLowerCase();
  for (const s of secrets) if (lower.includes(s.toLowerCase())) return s;
  return undefined;
}

export interface Home {
  dir: string;
  env: Record<string, string>;
  passwordFile(password: string): string;
  file(name: string, content: string): string;
}

export function makeHome(): Home {
  const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-test-'));
  capture.home(dir);
  const env = {
    HOME: dir,
    XDG_CONFIG_HOME: path.join(dir, 'config'),
    XDG_DATA_HOME: path.join(dir, 'data'),
    XDG_STATE_HOME: path.join(dir, 'state'),
  };
  return {
    dir,
    env,
    passwordFile(password: string) {
      registerSecret(password);
      const file = path.join(dir, `pw-${Math.random().toString(36).slice(2)}.txt`);
      writeFileSync(file, password + '\n', { mode: 0o600 });
      return file;
    },
    file(name: string, content: string) {
      const file = path.join(dir, name);
      writeFileSync(file, content);
      return file;
    },
  };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  json: () => any;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  input?: string;
  cwd?: string;
  timeoutMs?: number;
}

// Variables of the developer's shell that would change loopsign's behaviour are never passed through.
const SCRUBBED = /^(LOOPSIGN_|XDG_|NO_COLOR|FORCE_COLOR|ETH_RPC_URL$)/;

/** The environment of a loopsign child: this process's, scrubbed, the home's XDG directories, then `extra`. */
export function childEnv(home: Home, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !SCRUBBED.test(k)) env[k] = v;
  Object.assign(env, home.env);
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

// A run is killed only when it hangs: under the test's own timeout (10 minutes in cli and e2e, vitest.config.ts), far
// above anything a loaded machine takes. At 120 s, an ask waiting for its settlement under a second full run was killed
// (exit -1) while the sandbox was still settling it: a timing assertion in disguise (issue 23).
const RUN_HANG_MS = 570_000;

/** `--timeout` for a command's wait whose end is the test's premise, not its subject (a settlement, a review): a hang guard. */
export const SETTLE_TIMEOUT = '540';

export function runCli(args: string[], home: Home, options: RunOptions = {}): Promise<RunResult> {
  return startCli(args, home, options).done;
}

/** A started run: its process (to kill it), and its result once it ended (code -1 when a signal ended it). */
export interface StartedRun {
  child: ChildProcess;
  done: Promise<RunResult>;
}

/** As runCli, returning the process at once, so a test can kill it at a moment of its choosing. */
export function startCli(args: string[], home: Home, options: RunOptions = {}): StartedRun {
  const env = childEnv(home, options.env);
  const child = spawn(process.execPath, [BIN, ...args], { env, cwd: options.cwd ?? home.dir, stdio: ['pipe', 'pipe', 'pipe'] });
  const done = new Promise<RunResult>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? RUN_HANG_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      capture.run(args, stdout, stderr);
      const leaked = findSecret(stdout) ?? findSecret(stderr);
      if (leaked) {
        reject(new Error(`secret leaked in the output of loopsign ${args.join(' ')}: ${leaked.slice(0, 6)}…`));
        return;
      }
      resolve({
        code: code ?? -1,
        stdout,
        stderr,
        json: () => {
          const lines = stdout.trim().split('\n');
          if (lines.length !== 1) throw new Error(`expected exactly one JSON document on stdout, got ${lines.length} lines:\n${stdout}`);
          return JSON.parse(lines[0]!);
        },
      });
    });
    // A child may exit before reading all its input (a refusal at a size cap): that is its answer, not an error.
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(options.input ?? '');
  });
  return { child, done };
}

/** Every file under dir (recursively), for scans of what loopsign wrote. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) out.push(...filesUnder(full));
    else out.push(full);
  }
  return out;
}

/** The example ask behind the shared vectors (ask-keystore-eip3009.json): a chain 8453 ask the vectors hash. */
export const VECTOR_ASK_BODY = {
  bounty: { amount: '1500000', bountyEligibility: '0', requiredVoters: '3' },
  clientRequestId: 'local-signer-test',
  maxPaymentAmount: '1500000',
  question: { categoryId: '1', contextUrl: 'https://example.com/context', tags: ['agent'], title: 'Should this agent proceed?' },
  roundConfig: { questionDurationSeconds: '1200', maxVoters: '100', minVoters: '3' },
  chainId: 8453,
};

export function readVector(name: string): any {
  return JSON.parse(readFileSync(path.join(VECTORS, name), 'utf8'));
}
