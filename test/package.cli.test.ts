// The npm package runs without the repository (issue 19 §1): packed from a copy of the sources with no dist/ (as a
// fresh clone is), `prepack` builds it; the tarball carries what runs and nothing else; extracted elsewhere (its
// dependencies linked, as an install provides them), it answers --version and --help and verifies the example
// packet from a folder outside the repository. CI (.ci/run → scripts/smoke-package.mjs) also installs it with
// `npm i -g --prefix` from the registry and runs the sandbox and a quote.
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, VECTORS } from './helpers/cli.js';
import { packageProblems } from '../scripts/package-files.mjs';

const tmp = mkdtempSync(path.join(tmpdir(), 'loopsign-pack-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// What a fresh clone holds: the sources, without what a build or an install makes.
const NOT_IN_A_CLONE = new Set(['node_modules', 'dist', 'coverage', '.tmp', '.git']);

describe('the npm package', () => {
  it('is built by prepack from a clean copy, carries only what runs, and runs from outside the repository', () => {
    const copy = path.join(tmp, 'clone');
    mkdirSync(copy);
    for (const entry of readdirSync(ROOT)) {
      if (!NOT_IN_A_CLONE.has(entry)) cpSync(path.join(ROOT, entry), path.join(copy, entry), { recursive: true });
    }
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
    expect(existsSync(path.join(copy, 'dist'))).toBe(false);

    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', tmp], {
      cwd: copy,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 280_000,
    });
    const doc = JSON.parse(out.slice(out.indexOf('[')))[0] as {
      filename: string;
      size: number;
      unpackedSize: number;
      files: { path: string }[];
    };
    const files = doc.files.map((f) => f.path);
    expect(packageProblems(files)).toEqual([]);
    // Lean: about 3 MiB packed today: dist/ is the program bundled with the packages it runs on (viem, zod, undici,
    // the MCP SDK…), which an install then no longer fetches, the contract artifacts and the docs; and the V8 code
    // cache of each of its files (bin/load-chunks.cjs), about 1.2 MiB of it. MetaMask's delegation-core (budget grants,
    // issue 38) brings @metamask/utils with lodash, debug and a word list, some 550 KB unpacked, for a few encoders:
    // loopsign's own encoders would shed them. Until then the bound is 3.5 MiB (Node 24's code caches are larger).
    expect(doc.size).toBeLessThan(3.5 * 1024 * 1024);

    const extracted = path.join(tmp, 'installed');
    mkdirSync(extracted);
    execFileSync('tar', ['xzf', path.join(tmp, doc.filename), '-C', extracted]);
    const pkg = path.join(extracted, 'package');
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(pkg, 'node_modules'), 'dir');
    const outside = path.join(tmp, 'outside');
    mkdirSync(outside);
    cpSync(path.join(VECTORS, 'synthetic-evidence-v4.json'), path.join(outside, 'packet.json'));
    cpSync(path.join(VECTORS, 'synthetic-evidence-v4.spki.txt'), path.join(outside, 'key.spki.txt'));
    const env = {
      PATH: process.env.PATH,
      HOME: outside,
      XDG_CONFIG_HOME: path.join(outside, 'c'),
      XDG_DATA_HOME: path.join(outside, 'd'),
      XDG_STATE_HOME: path.join(outside, 's'),
    };
    const run = (...args: string[]) =>
      execFileSync(process.execPath, [path.join(pkg, 'bin', 'loopsign.js'), ...args], { cwd: outside, env, encoding: 'utf8' });
    expect(run('--version').trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(run('--help')).toMatch(/^Usage: loopsign/);
    expect(JSON.parse(run('--json', 'verify-evidence', 'packet.json', '--public-key', 'key.spki.txt'))).toMatchObject({
      ok: true,
      kind: 'packet',
      valid: true,
    });
    expect(JSON.parse(run('--json', 'config', 'show')).settings.chainId.value).toBe(8453);
    // --debug's stack trace names the package's files, never the folder the package was built in (a code cache
    // carries the name its file was compiled under: bin/load-chunks.cjs).
    writeFileSync(path.join(outside, 'bad.json'), '{"bad":');
    const debug = spawnSync(
      process.execPath,
      [path.join(pkg, 'bin', 'loopsign.js'), '--debug', 'verify-evidence', 'bad.json', '--public-key', 'key.spki.txt'],
      {
        cwd: outside,
        env,
        encoding: 'utf8',
      },
    );
    expect(debug.status).toBe(2);
    expect(debug.stderr).toMatch(/\n {4}at .*dist\/chunks\/[^/]+\.cjs:\d+:\d+/);
    expect(debug.stderr).not.toContain(copy);
  });
});
