// The one way a test runs a fast-check property (issue 40): it prints its seed when it starts, and a failure can be
// replayed. A failure is one line, the error vitest prints in the run's closing summary (and also written to stderr,
// which CI keeps): the seed, the failing case (fast-check's path: its number and, after shrinking, the shrink steps)
// and the exact command that replays it. The failing case's story (the counterexample, the error with its stack, and
// whatever the test adds) goes to a file under the run's scratch folder (TMPDIR, test/setup/tmp.ts, which keeps that
// file when the run ends) and the line names it.
//   LOOPSIGN_PROPERTY_SEED=S             every property of the run starts from seed S (else a test's fixed seed, else a random one)
//   LOOPSIGN_PROPERTY_PATH=P             with the seed, runs only the case at path P (what the failure line gives)
// One property per test: the replay command selects the test by name, and the seed and path apply to every
// property it runs.
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** fast-check's parameters, and what the failing case's story should also hold (called only on a failure). */
export type PropertyParams<Ts> = fc.Parameters<Ts> & { story?: () => unknown };

/** The folder the failing cases' stories go to: test/setup/tmp.ts keeps it when the run's folder goes. */
export const FAILURES_FOLDER = 'property-failures';

const env = (name: string): string | undefined => {
  const v = process.env[name];
  return v === undefined || v === '' ? undefined : v;
};

function seedFromEnv(): number | undefined {
  const v = env('LOOPSIGN_PROPERTY_SEED');
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new Error(`LOOPSIGN_PROPERTY_SEED=${v}: give the integer a failure line printed`);
  return n | 0;
}

/** A word for a POSIX shell: as it is, or single-quoted. */
const shellWord = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`);
const regexEscape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The test running now: its file (relative to the repository) and a -t pattern that selects it alone. */
function currentTest(): { file: string; name: string; pattern: string } {
  const { testPath, currentTestName } = expect.getState();
  const file = testPath ? path.relative(ROOT, testPath) : '<test file>';
  const name = currentTestName ?? '';
  // vitest matches -t against the describe names and the test's, joined by spaces; its own name ends the match.
  return { file, name, pattern: `${regexEscape(name.split(' > ').join(' '))}$` };
}

/** The command that replays a case: the seed and path, the other LOOPSIGN_PROPERTY_* settings of this run, the test. */
export function replayCommand(file: string, pattern: string, seed: number, pathOf: string | null): string {
  const settings = Object.entries(process.env)
    .filter(([k, v]) => k.startsWith('LOOPSIGN_PROPERTY_') && !['LOOPSIGN_PROPERTY_SEED', 'LOOPSIGN_PROPERTY_PATH'].includes(k) && v)
    .map(([k, v]) => `${k}=${shellWord(v!)}`);
  return [
    `LOOPSIGN_PROPERTY_SEED=${seed}`,
    ...(pathOf ? [`LOOPSIGN_PROPERTY_PATH=${shellWord(pathOf)}`] : []),
    ...settings,
    'npx vitest run',
    shellWord(file),
    '-t',
    shellWord(pattern),
  ].join(' ');
}

function describeError(e: unknown): string {
  if (e instanceof Error) return e.stack ?? `${e.name}: ${e.message}`;
  return String(e);
}

const firstLine = (e: unknown): string => {
  const text = e instanceof Error ? e.message : String(e);
  const line = text.split('\n').find((l) => l.trim()) ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
};

/** Writes the failing case's story and turns the failure into the one line that replays it. */
function failure<Ts>(details: fc.RunDetails<Ts>, test: ReturnType<typeof currentTest>, story: (() => unknown) | undefined): Error {
  const command = replayCommand(test.file, test.pattern, details.seed, details.counterexamplePath);
  const caseNo = details.counterexamplePath ? Number(details.counterexamplePath.split(':')[0]) + 1 : details.numRuns;
  const folder = path.join(tmpdir(), FAILURES_FOLDER);
  mkdirSync(folder, { recursive: true });
  const where = path.join(
    folder,
    `${path.basename(test.file).replace(/\.ts$/, '')}-seed${details.seed}-${(details.counterexamplePath ?? 'none').replaceAll(':', '_')}-${process.pid}-${Date.now()}.txt`,
  );
  let extra = '';
  try {
    const s = story?.();
    if (s !== undefined) extra = typeof s === 'string' ? s : fc.stringify(s);
  } catch (error) {
    extra = `(the test's story could not be written: ${describeError(error)})`;
  }
  writeFileSync(
    where,
    [
      `test: ${test.file} > ${test.name}`,
      `seed: ${details.seed}`,
      `path: ${details.counterexamplePath}`,
      `failed at case ${caseNo} (${details.numRuns} run, ${details.numShrinks} shrinks)`,
      `replay: ${command}`,
      '',
      `counterexample: ${fc.stringify(details.counterexample)}`,
      '',
      `error: ${describeError(details.errorInstance)}`,
      ...(extra ? ['', `story: ${extra}`] : []),
      '',
    ].join('\n'),
  );
  const line = `property failed: seed ${details.seed}, path ${details.counterexamplePath} (case ${caseNo}); replay: ${command}; story: ${where}`;
  process.stderr.write(`${line}\n`);
  // The line and the error's first line: the error's whole text and stack are in the story file (a case's story in
  // an assertion message ran to kilobytes, and the run's summary did not keep it).
  const error = new Error(`${line}\n${firstLine(details.errorInstance)}`);
  error.stack = error.message;
  return error;
}

function start<Ts>(params: PropertyParams<Ts> | undefined) {
  const { story, ...rest } = params ?? {};
  const fixed = seedFromEnv() ?? rest.seed;
  // fast-check's own default (Date.now() ^ random), chosen here so that it can be printed before the first case.
  const seed = fixed ?? (Date.now() ^ (Math.random() * 0x100000000)) | 0;
  const replayPath = env('LOOPSIGN_PROPERTY_PATH');
  const test = currentTest();
  console.log(
    `property ${test.file} > ${test.name}: seed ${seed}${replayPath ? `, replaying path ${replayPath}` : ''}` +
      ` (LOOPSIGN_PROPERTY_SEED=${seed}${replayPath ? ` LOOPSIGN_PROPERTY_PATH=${replayPath}` : ''} replays it)`,
  );
  const run: fc.Parameters<Ts> = { ...rest, seed, ...(replayPath ? { path: replayPath } : {}) };
  return { run, test, story };
}

function finish<Ts>(details: fc.RunDetails<Ts>, test: ReturnType<typeof currentTest>, story: (() => unknown) | undefined): void {
  if (details.failed) throw failure(details, test, story);
}

/** fc.assert for a synchronous property, with its seed printed and a failure that names the command to replay it. */
export function assertProperty<Ts>(property: fc.IProperty<Ts>, params?: PropertyParams<Ts>): void {
  const { run, test, story } = start(params);
  finish(fc.check(property, run), test, story);
}

/** fc.assert for an asynchronous property, with its seed printed and a failure that names the command to replay it. */
export async function assertAsyncProperty<Ts>(property: fc.IAsyncProperty<Ts>, params?: PropertyParams<Ts>): Promise<void> {
  const { run, test, story } = start(params);
  finish(await fc.check(property, run), test, story);
}

/** Whether this run replays one case (LOOPSIGN_PROPERTY_PATH): a test's checks of how many cases ran do not apply. */
export const replaying = (): boolean => env('LOOPSIGN_PROPERTY_PATH') !== undefined;
