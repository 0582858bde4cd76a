// What makes the cold start short must not change what the user sees: the top-level help the bin prints from
// dist/help.txt is exactly what the program renders, on a pipe and on a terminal of any width; a command that
// runs loads only its own definition (each name in cli.ts's list defining the command of that name, in-process:
// test/cold-start.test.ts).
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BIN, ROOT, VECTORS } from './helpers/cli.js';

const CLI = path.join(ROOT, 'dist', 'cli.js');

/** The program's own rendering (commander, every definition), not the bin's shortcut. */
function programSays(args: string[]) {
  const r = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const { main } = await import(${JSON.stringify(CLI)}); process.exitCode = await main([process.argv0, 'loopsign', ...${JSON.stringify(args)}]);`,
    ],
    { encoding: 'utf8' },
  );
  return { code: r.status, stdout: r.stdout };
}

function binSays(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout };
}

function importsOf(args: string[]): string[] {
  const log = path.join(mkdtempSync(path.join(tmpdir(), 'loopsign-imports-')), 'imports.log');
  spawnSync(process.execPath, ['--import', path.join(ROOT, 'test/helpers/record-imports.mjs'), BIN, ...args], {
    env: { ...process.env, LOOPSIGN_IMPORT_LOG: log },
    stdio: 'ignore',
  });
  return readFileSync(log, 'utf8').trim().split('\n');
}

describe('the top-level help, answered by the bin', () => {
  it.each([[['--help']], [['-h']], [[]]])('loopsign %j prints exactly what the program renders, with its exit code', (args) => {
    const stored = readFileSync(path.join(ROOT, 'dist', 'help.txt'), 'utf8');
    const program = programSays(args);
    expect(program.stdout).toMatch(/^Usage: loopsign \[options\] \[command\]/);
    expect(binSays(args)).toEqual(program);
    expect(stored).toBe(program.stdout);
    expect(program.code).toBe(args.length ? 0 : 2);
  });

  it('without loading the program', () => {
    const urls = importsOf(['--help']);
    expect(urls.some((u) => u.includes('/bin/loopsign.js'))).toBe(true);
    expect(urls.filter((u) => u.includes('/dist/') || u.includes('/node_modules/'))).toEqual([]);
  });

  // A terminal: help is wrapped at 80 columns at most, so a wide one shows the stored text, from the bin and from
  // commander (`help`) alike; a narrow one gets commander's narrower wrapping.
  it.skipIf(!existsSync('/usr/bin/script'))("on a terminal: the stored text at 132 columns, commander's own at 60", () => {
    const tty = (cols: number, args: string) =>
      spawnSync('/usr/bin/script', ['-qec', `stty cols ${cols}; ${process.execPath} ${BIN} ${args}`, '/dev/null'], {
        encoding: 'utf8',
      }).stdout.replace(/\r/g, '');
    const stored = readFileSync(path.join(ROOT, 'dist', 'help.txt'), 'utf8');
    expect(tty(132, '--help')).toBe(stored);
    expect(tty(132, 'help')).toBe(stored);
    // Narrower than 80: the bin leaves it to commander, whose rendering (`help`) it then is.
    const narrow = tty(60, '--help');
    expect(narrow).toMatch(/^Usage: loopsign/);
    expect(narrow).not.toBe(stored);
    expect(narrow).toBe(tty(60, 'help'));
  });
});

describe('only the command that runs is defined', () => {
  it('verify-evidence loads its own definition and no other', () => {
    const urls = importsOf([
      'verify-evidence',
      path.join(VECTORS, 'synthetic-evidence-v4.json'),
      '--public-key',
      path.join(VECTORS, 'synthetic-evidence-v4.spki.txt'),
    ]);
    const defs = urls.filter((u) => /\/dist\/commands\/[\w-]+\.def\.js$/.test(u)).map((u) => path.basename(u));
    expect([...new Set(defs)]).toEqual(['evidence.def.js']);
    expect(urls.some((u) => u.includes('/dist/commands/evidence.js'))).toBe(true);
  });

  it("an unknown command still gets commander's suggestion", () => {
    const r = spawnSync(process.execPath, [BIN, 'verify-evidenc'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/hint: did you mean verify-evidence\?/);
  });
});

describe('viem, bundled at build (scripts/vendor-viem.mjs)', () => {
  const DIST = path.join(ROOT, 'dist');
  const BARE_VIEM = /(\bfrom\s*|\bimport\(\s*)['"]viem(\/[\w-]+)?['"]/;

  it('no compiled file imports viem itself: every import goes to the bundle', () => {
    const files = readdirSync(DIST, { recursive: true, withFileTypes: true }).filter(
      (e) => e.isFile() && e.name.endsWith('.js') && !e.parentPath.includes(`${path.sep}vendor`),
    );
    const compiled = files.map((e) => readFileSync(path.join(e.parentPath, e.name), 'utf8'));
    expect(compiled.filter((t) => t.includes('/vendor/viem')).length).toBeGreaterThan(20);
    expect(files.filter((_e, i) => BARE_VIEM.test(compiled[i]!)).map((e) => e.name)).toEqual([]);
  });

  it('the signing path loads no module of the installed viem, ox or abitype, and the bundle is that viem', () => {
    const log = path.join(mkdtempSync(path.join(tmpdir(), 'loopsign-imports-')), 'imports.log');
    const load = `await import(${JSON.stringify(path.join(DIST, 'wallet', 'executor.js'))}); await import(${JSON.stringify(path.join(DIST, 'ask', 'check-plan.js'))});`;
    const r = spawnSync(
      process.execPath,
      ['--import', path.join(ROOT, 'test/helpers/record-imports.mjs'), '--input-type=module', '-e', load],
      { env: { ...process.env, LOOPSIGN_IMPORT_LOG: log }, encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
    const urls = readFileSync(log, 'utf8').trim().split('\n');
    expect(urls.some((u) => u.endsWith('/dist/vendor/viem.js'))).toBe(true);
    expect(urls.filter((u) => /\/node_modules\/(viem|ox|abitype)\//.test(u))).toEqual([]);
    const installed = JSON.parse(readFileSync(path.join(ROOT, 'node_modules', 'viem', 'package.json'), 'utf8')).version;
    expect(readFileSync(path.join(DIST, 'vendor', 'viem.js'), 'utf8').split('\n')[0]).toContain(`viem ${installed},`);
  });
});
