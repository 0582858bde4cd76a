// Runs the built binary on a real pseudo-terminal, the way a CI runner or `script` without a terminal does: the pty
// has no size (0 columns, 0 rows), unless a test gives one (a person's terminal, where progress is a spinner).
// util-linux `script` when present, else Python's pty module; what a test types goes to the terminal as keys.
// The output is counted as it comes and the run is killed past a cap, so a command that runs away fails its test
// instead of filling the disk.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { BIN, childEnv, type Home } from './cli.js';

export interface PtyRun {
  /** The PID of the pty runner (script or python); the loopsign process is its child. */
  runnerPid: number;
  /** The loopsign process's PID, once it is running. */
  loopsignPid(): Promise<number>;
  output(): string;
  bytes(): number;
  /** Resolves with the exit code of loopsign (or -1 when the run was killed, e.g. past the output cap). */
  exited: Promise<number>;
  /** Typed at the terminal, as keys: '\x03' is Ctrl-C. */
  type(keys: string): void;
  kill(): void;
}

const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** `loopsign ARGS` on a pseudo-terminal: 0 columns and rows, or `size`. */
export function runOnPty(
  args: string[],
  home: Home,
  env: Record<string, string | undefined>,
  maxBytes = 1 << 20,
  size = { cols: 0, rows: 0 },
): PtyRun {
  // The size is set explicitly (a runner's pty has none); `exec` makes loopsign the shell's own process.
  // A terminal's run, whatever runs the tests: CI runners set CI, which turns loopsign's spinner off (src/output.ts),
  // so a pty test would not see what a person sees. A test that wants CI says so in `env`.
  const runEnv = childEnv(home, { CI: undefined, ...env });
  const command = `stty cols ${size.cols} rows ${size.rows} 2>/dev/null; exec ${q(process.execPath)} ${q(BIN)} ${args.map(q).join(' ')}`;
  const runner = hasScript
    ? spawn('script', ['-qfec', command, '/dev/null'], { cwd: home.dir, env: runEnv, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(
        'python3',
        ['-c', 'import os,pty,sys; s=pty.spawn(["sh","-c",sys.argv[1]]); sys.exit(os.waitstatus_to_exitcode(s) & 255)', command],
        { cwd: home.dir, env: runEnv, stdio: ['pipe', 'pipe', 'pipe'] },
      );
  let out = '';
  let bytes = 0;
  const collect = (d: Buffer) => {
    bytes += d.length;
    if (out.length < maxBytes) out += d.toString('utf8');
    if (bytes > maxBytes) kill();
  };
  runner.stdout!.on('data', collect);
  runner.stderr!.on('data', collect);
  runner.stdin!.on('error', () => undefined);
  const exited = new Promise<number>((resolve) => runner.on('exit', (code) => resolve(code ?? -1)));
  let found: number | undefined;
  const child = async (): Promise<number> => {
    if (found !== undefined) return found;
    for (let i = 0; i < 400; i++) {
      try {
        const kids = readFileSync(`/proc/${runner.pid}/task/${runner.pid}/children`, 'utf8')
          .trim()
          .split(/\s+/)
          .filter(Boolean)
          .map(Number);
        for (const pid of kids) {
          if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(BIN)) return (found = pid);
        }
      } catch {
        // not there yet, or gone
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the loopsign process never appeared under the pty');
  };
  function kill(): void {
    runner.kill('SIGKILL');
    if (found !== undefined) {
      try {
        process.kill(found, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  // Found early, so that a run killed past its cap never leaves loopsign behind.
  void child().catch(() => undefined);
  return {
    runnerPid: runner.pid!,
    loopsignPid: child,
    output: () => out,
    bytes: () => bytes,
    exited,
    type: (keys) => void runner.stdin!.write(keys),
    // The runner and, by its PID, the loopsign process under it (which a killed runner would leave behind).
    kill,
  };
}

/** Resolves once `text` matches, or rejects after `ms` with what was seen. */
export async function until(read: () => string, pattern: RegExp, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (pattern.test(read())) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`never saw ${pattern} in:\n${read().slice(-2000)}`);
}
