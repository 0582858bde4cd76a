// The architecture rule (src/context.ts, src/env.ts): the core reads its environment variables from the env it is
// handed — the Context's, or a parameter from its caller — never from the process. Only the entry points below read
// process.env; a new use anywhere else under src/ fails here until it is moved to the Context's env (or, if it truly
// must be the process's, listed below with the reason).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../src');

/** Files that may name process.env, and why. */
const ALLOWED: Record<string, string> = {
  // The CLI's entry: takes the process's environment once and hands it to every Context (and to its MCP server).
  'cli.ts': 'entry point',
  // The AWS SDK reads its Node-version warning switch from the process's own environment: set there, read nowhere.
  'wallet/signers/aws-kms.ts': 'sets an AWS SDK variable the SDK reads from the process',
  // The sandbox is its own program (the service's local stand-in), started by `loopsign sandbox` or a test: its
  // default state folder, anvil's binary and anvil's child environment are its process's.
  'sandbox/index.ts': 'sandbox program',
  'sandbox/anvil.ts': 'sandbox program',
  'sandbox/anvil-binary.ts': 'sandbox program',
};

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(SRC, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
}

/** `process.env` in code (comments included: a comment that names it is rare and worth a look). */
const usesProcessEnv = (text: string) => /\bprocess\s*\.\s*env\b|\bprocess\s*\[\s*['"]env['"]\s*\]/.test(text);

describe('the environment boundary', () => {
  it('no module under src/ reads process.env but the entry points listed here', () => {
    const offenders = tsFiles(SRC).filter((f) => !(f in ALLOWED) && usesProcessEnv(readFileSync(path.join(SRC, f), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('each allowed file exists and still needs its exception (a stale entry would hide a new use)', () => {
    for (const f of Object.keys(ALLOWED)) expect(usesProcessEnv(readFileSync(path.join(SRC, f), 'utf8')), f).toBe(true);
  });
});
