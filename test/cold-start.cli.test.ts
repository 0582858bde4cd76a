// What makes the cold start short must not change what the user sees: the top-level help the bin prints from
// dist/help.txt is exactly what the program renders, on a pipe and on a terminal of any width; a command that
// runs loads only its own definition (each name in cli.ts's list defining the command of that name, in-process:
// test/cold-start.test.ts).
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { builtinModules } from 'node:module';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { bundleMeta, CHAIN_READ, importsOf, modulesIn } from './helpers/bundle-imports.js';
import { BIN, ROOT, VECTORS } from './helpers/cli.js';

const CLI = path.join(ROOT, 'dist', 'cli.cjs');

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

describe('the top-level help, answered by the bin', () => {
  it.each([[['--help']], [['-h']], [[]]])('loopsign %j prints exactly what the program renders, with its exit code', (args) => {
    const stored = readFileSync(path.join(ROOT, 'dist', 'help.txt'), 'utf8');
    const program = programSays(args);
    expect(program.stdout).toMatch(/^Usage: loopsign \[options\] \[command\]/);
    expect(binSays(args)).toEqual(program);
    expect(stored).toBe(program.stdout);
    expect(program.code).toBe(args.length ? 0 : 2);
  });

  it("--version from the bin is the program's own", () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(binSays(['--version'])).toEqual({ code: 0, stdout: `${pkg.version}\n` });
    expect(programSays(['--version'])).toEqual(binSays(['--version']));
  });

  it.each([['--help'], ['--version']])('%s without loading the program', (arg) => {
    const urls = importsOf([arg]);
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
    const modules = modulesIn(
      importsOf([
        'verify-evidence',
        path.join(VECTORS, 'synthetic-evidence-v4.json'),
        '--public-key',
        path.join(VECTORS, 'synthetic-evidence-v4.spki.txt'),
      ]),
    );
    const defs = modules.filter((m) => /^build\/commands\/[\w-]+\.def\.js$/.test(m)).map((m) => path.basename(m));
    expect(defs).toEqual(['evidence.def.js']);
    expect(modules).toContain('build/commands/evidence.js');
    // It makes no HTTP request, so it leaves V8's flags alone (src/wasm-tier.ts: a changed flag costs node's built-in
    // modules their code cache, some 10 ms of this command).
    expect(modules).not.toContain('build/wasm-tier.js');
  });

  it("an unknown command still gets commander's suggestion", () => {
    const r = spawnSync(process.execPath, [BIN, 'verify-evidenc'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/hint: did you mean verify-evidence\?/);
  });
});

describe('the program, bundled at build (scripts/bundle.mjs)', () => {
  const DIST = path.join(ROOT, 'dist');
  // What the bundle leaves to node_modules (scripts/bundle.mjs's EXTERNAL): native addons, the anvil package and the
  // optional signer SDKs; and the optional helpers packages require inside a try and do without: ws's native ones, and
  // debug's supports-color (debug comes with MetaMask's delegation packages). Everything else a file imports is node's own.
  const OPTIONAL = ['bufferutil', 'utf-8-validate', 'supports-color'];
  const LEFT_OUT =
    /^(better-sqlite3|sharp|@foundry-rs\/.+|@aws-sdk\/.+|@google-cloud\/.+|@grpc\/.+|@ledgerhq\/.+|rxjs|bufferutil|utf-8-validate|supports-color)$/;
  const nodeOwn = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

  it('every file in dist/ imports only node, the native addons and the optional SDKs: all else is bundled', () => {
    const imports = Object.values(bundleMeta()).flatMap((f) => f.external);
    expect(imports).toContain('sharp');
    expect([...new Set(imports.filter((s) => !nodeOwn.has(s) && !s.startsWith('node:') && !LEFT_OUT.test(s)))]).toEqual([]);
    // And the meta describes this build: every file it names is in dist/.
    const files = readdirSync(DIST, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && /\.c?js$/.test(e.name));
    expect(files.map((e) => path.relative(ROOT, path.join(e.parentPath, e.name))).sort()).toEqual(Object.keys(bundleMeta()).sort());
  });

  it('every package the program loads from node_modules at run time is one an install fetches', () => {
    // The bundle's own imports, and what build/'s modules load past the bundler (createRequire, for native addons and
    // commander; the anvil package by path): moving one of them to devDependencies would pass every test run in the
    // repository, whose node_modules has all of them, and break every install.
    const fromBundle = Object.values(bundleMeta()).flatMap((f) => f.external);
    const built = readdirSync(path.join(ROOT, 'build'), { recursive: true, withFileTypes: true }).filter((e) => e.name.endsWith('.js'));
    const required = built.flatMap((e) =>
      [
        ...readFileSync(path.join(e.parentPath, e.name), 'utf8').matchAll(
          /createRequire\(import\.meta\.url\)(?:\.resolve)?\(['"]([^'"]+)['"]\)/g,
        ),
      ].map((m) => m[1]!),
    );
    expect(required).toEqual(expect.arrayContaining(['commander', 'better-sqlite3']));
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    const installed = new Set(Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies, ...pkg.peerDependencies }));
    const packageOf = (s: string) =>
      s
        .split('/')
        .slice(0, s.startsWith('@') ? 2 : 1)
        .join('/');
    const needed = [...new Set([...fromBundle, ...required].filter((s) => !nodeOwn.has(s) && !s.startsWith('node:')).map(packageOf))];
    // ws and debug require their optional helpers inside a try, and do without them.
    expect(needed.filter((p) => !installed.has(p) && !OPTIONAL.includes(p))).toEqual([]);
  });

  it('the files the program starts by path (the audit worker) are files of the build', () => {
    const sources = readdirSync(path.join(ROOT, 'src'), { recursive: true, withFileTypes: true }).filter((e) => e.name.endsWith('.ts'));
    const started = sources.flatMap((e) =>
      [...readFileSync(path.join(e.parentPath, e.name), 'utf8').matchAll(/packageFile\('dist', ([^)]+)\)/g)].map((m) =>
        path.join(DIST, ...m[1]!.split(',').map((p) => p.trim().replace(/^'|'$/g, ''))),
      ),
    );
    expect(started).toContain(path.join(DIST, 'evidence', 'audit-worker.cjs'));
    expect(started.filter((f) => !existsSync(f))).toEqual([]);
  });

  it('a signing command loads no module of the installed viem, ox or abitype, and the bundle is that viem', () => {
    const urls = importsOf(CHAIN_READ);
    expect(urls.filter((u) => /\/node_modules\/(viem|ox|abitype)\//.test(u))).toEqual([]);
    expect(modulesIn(urls).some((m) => m.startsWith('node_modules/viem/'))).toBe(true);
    // It reads the chain over node:http (src/service/node-http.ts), so no HTTP parser is compiled to WebAssembly
    // and V8's flags are left alone (src/wasm-tier.ts is for fetch's users).
    expect(modulesIn(urls)).toContain('build/service/node-http.js');
    expect(modulesIn(urls)).not.toContain('build/wasm-tier.js');
    const installed = JSON.parse(readFileSync(path.join(ROOT, 'node_modules', 'viem', 'package.json'), 'utf8')).version;
    expect(readFileSync(path.join(DIST, 'THIRD-PARTY-LICENSES.txt'), 'utf8')).toContain(`\nviem ${installed}\n`);
  });

  it('a command that asks the service loads neither the undici package nor fetch: it uses node:http', () => {
    // Loading undici (the package, or node's own behind fetch) and compiling its parser cost some 60-70 ms of CPU per
    // run (src/service/node-http.ts); only the MCP SDK's transport and an MCP image upload still load one.
    const urls = importsOf(['--json', '--base-url', 'http://127.0.0.1:1', 'status', '--client-request-id', 'cold-start-1']);
    const modules = modulesIn(urls);
    expect(modules).toContain('build/service/node-http.js');
    expect(modules.filter((m) => m.startsWith('node_modules/undici/'))).toEqual([]);
    expect(modules).not.toContain('build/wasm-tier.js');
  });

  it('the bundle holds one copy of each @noble and @scure package', () => {
    // loopsign's keystore code, viem, ox, @scure/bip32 and tlock-js all use secp256k1 and keccak: a second copy of a
    // package is a second curve that precomputes its tables in every signing run (~25 ms each), and more code to
    // compile. One copy is kept by depending on @noble/curves and @noble/hashes at exactly viem's versions.
    const copies = new Map<string, Set<string>>();
    for (const m of Object.values(bundleMeta()).flatMap((f) => f.modules)) {
      const found = /^((?:.*\/)?node_modules\/(@(?:noble|scure)\/[^/]+))\//.exec(m);
      if (found) copies.set(found[2]!, (copies.get(found[2]!) ?? new Set()).add(found[1]!));
    }
    expect(copies.get('@noble/curves')?.size).toBe(1);
    expect([...copies].filter(([, dirs]) => dirs.size > 1)).toEqual([]);
  });
});
