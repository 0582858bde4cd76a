// The record behind the secrets suite: every run of the binary (arguments, stdout, stderr), every isolated home
// (whose state, config and data directories hold what loopsign wrote: journals, config, keystores) and every
// secret the tests use are appended to a capture directory shared by all test files. After the whole run,
// test/setup/secrets-scan.ts scans all of it at once and fails the run on any secret found.
import { appendFileSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    captureDir: string;
  }
}

function dir(): string | undefined {
  try {
    return inject('captureDir');
  } catch {
    return undefined; // outside a vitest run with the global setup (say, a helper used by a script)
  }
}

function append(file: string, record: unknown): void {
  const d = dir();
  if (d) appendFileSync(path.join(d, file), JSON.stringify(record) + '\n');
}

export const capture = {
  run: (args: string[], stdout: string, stderr: string) => append(`runs-${process.pid}.jsonl`, { args, stdout, stderr }),
  home: (home: string) => append(`homes-${process.pid}.jsonl`, home),
  secret: (value: string) => append(`secrets-${process.pid}.jsonl`, value),
  /** A hardening result to count in the summary printed after the run (a refused scenario, a kill point, …). */
  count: (kind: string, name: string, n = 1) => append(`counts-${process.pid}.jsonl`, { kind, name, n }),
  /** A line for the summary printed after the whole run (a suite's own counts, e.g. the live corpus replay). */
  summary: (line: string) => append(`summary-${process.pid}.jsonl`, line),
};

/** The summary lines suites recorded, in the order they were written. */
export function summaryLines(d: string): string[] {
  return lines(d, 'summary-') as string[];
}

/** Totals per kind of what the hardening suites recorded (counted once per name). */
export function countTotals(d: string): Record<string, number> {
  const seen = new Map<string, number>();
  for (const c of lines(d, 'counts-') as { kind: string; name: string; n: number }[]) seen.set(`${c.kind}\u0000${c.name}`, c.n);
  const totals: Record<string, number> = {};
  for (const [key, n] of seen) {
    const kind = key.split('\u0000')[0]!;
    totals[kind] = (totals[kind] ?? 0) + n;
  }
  return totals;
}

/** The isolated homes the tests made (test/helpers/cli.ts's makeHome). */
export function capturedHomes(d: string): string[] {
  return [...new Set(lines(d, 'homes-') as string[])];
}

export interface ScanReport {
  runs: number;
  files: number;
  secrets: number;
  leaks: string[];
}

function lines(d: string, prefix: string): unknown[] {
  return readdirSync(d)
    .filter((f) => f.startsWith(prefix))
    .flatMap((f) =>
      readFileSync(path.join(d, f), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    );
}

function filesUnder(d: string): string[] {
  if (!existsSync(d)) return [];
  return readdirSync(d).flatMap((e) => {
    const full = path.join(d, e);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

/** Scans everything captured in d for every captured secret; the leaks name where, never the secret itself. */
export function scanCapture(d: string): ScanReport {
  const secrets = [...new Set(lines(d, 'secrets-') as string[])].map((s) => s.toLowerCase()).filter((s) => s.length >= 8);
  const find = (text: string) => secrets.find((s) => text.toLowerCase().includes(s));
  const leaks: string[] = [];
  const runs = lines(d, 'runs-') as { args: string[]; stdout: string; stderr: string }[];
  for (const r of runs)
    if (find(r.stdout) || find(r.stderr) || find(r.args.join(' '))) leaks.push(`output of loopsign ${r.args.join(' ')}`);
  let files = 0;
  for (const home of capturedHomes(d)) {
    // What loopsign wrote; the test's own inputs (password files, key files) sit at the home's top level.
    for (const f of ['state', 'config', 'data'].flatMap((sub) => filesUnder(path.join(home, sub)))) {
      files++;
      if (find(readFileSync(f, 'utf8'))) leaks.push(f);
    }
  }
  return { runs: runs.length, files, secrets: secrets.length, leaks };
}
