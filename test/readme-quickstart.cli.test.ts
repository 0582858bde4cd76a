// The README's quick start works when pasted (issue 36, item 7): its first block, run by bash as a new user would in a
// fresh home (the build it starts with is the one the cli layer already made), creates the password file it exports
// (mode 0600, never over an existing one), the wallet, and prints the address and the settings: exit 0 throughout.
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, childEnv, makeHome, ROOT } from './helpers/cli.js';

/** The first ```sh block under "## Quick start", as printed in README.md. */
function quickStart(): string {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start'));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README.md has no ```sh block under ## Quick start');
  return block[1]!;
}

function runBlock(script: string, home: ReturnType<typeof makeHome>) {
  const lines = script
    .split('\n')
    // The build is the cli layer's (test/setup/build.ts); `npm ci` must not run in a test.
    .filter((l) => !/^npm ci\b/.test(l.trim()))
    .map((l) => l.replaceAll('node bin/loopsign.js', `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)}`));
  return spawnSync('bash', ['-euo', 'pipefail', '-c', lines.join('\n')], {
    cwd: home.dir,
    env: childEnv(home),
    encoding: 'utf8',
    timeout: 300_000,
  });
}

describe("the README's quick start", () => {
  it('runs as pasted: the password file is created with mode 0600, then the wallet, its address and the settings', () => {
    const script = quickStart();
    expect(script).toMatch(/^npm ci && npm run build$/m);
    const home = makeHome();
    const r = runBlock(script, home);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const file = path.join(home.dir, '.loopsign-password');
    expect((statSync(file).mode & 0o777).toString(8)).toBe('600');
    expect(readFileSync(file, 'utf8').trim().length).toBeGreaterThanOrEqual(16);
    expect(r.stdout).toMatch(/0x[0-9a-fA-F]{40}/);
    const settings = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
    expect(settings.ok).toBe(true);
    expect(settings.settings.passwordFile).toMatchObject({ value: file, source: 'env' });
  });

  it('never replaces a password file the user already has', () => {
    const home = makeHome();
    const file = path.join(home.dir, '.loopsign-password');
    writeFileSync(file, 'my own password, kept\n', { mode: 0o600 });
    const r = runBlock(quickStart(), home);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe('my own password, kept\n');
  });
});
