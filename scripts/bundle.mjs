// Part of `npm run build`, after scripts/compile.mjs: bundles the program into dist/, the folder the package ships and
// bin/loopsign.js runs. compile.mjs transpiles src/ into build/ (one file per module: what tests, bench and scripts import when
// they need a module of their own); esbuild then bundles build/'s entry points with everything they import, npm
// packages included, into a few dozen files. Node opens, reads and links ES modules one by one: the program was some
// 300 of them for a paid ask (95 of zod, 120 of its own) and loading them was most of a command's CPU; bundled, every
// command costs about 15 % less (docs/testing.md). Lazy imports stay lazy: each `import()` is a split point, so a
// command loads only the chunks it reaches, and code two chunks share sits in a third, once (one zod, one viem: the
// MCP SDK and loopsign build their schemas with the same zod).
// Left to node_modules: native addons (better-sqlite3, sharp), the optional signer SDKs a user installs beside
// loopsign, commander (required at run time through createRequire) and the anvil package (a binary, looked up).
// build/bundle-meta.json maps each file of dist/ to the modules in it and what it imports from node_modules:
// test/cold-start.cli.test.ts and test/lazy-imports.cli.test.ts read what a run loaded through it.
// dist/THIRD-PARTY-LICENSES.txt carries the licence of every package bundled.
import { build } from 'esbuild';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// LOOPSIGN_BUILD_OUT: the folder holding the build/ to bundle and the dist/ to write (scripts/build.mjs gives a folder
// of the build's own, inside the checkout so that node_modules/ is found from it); without it, the checkout.
const base = process.env.LOOPSIGN_BUILD_OUT || root;
const from = path.join(base, 'build');
const dist = path.join(base, 'dist');
// esbuild names files relative to the checkout (absWorkingDir); bundle-meta.json names them as the package has them.
const prefix = path.relative(root, base) ? `${path.relative(root, base)}/` : '';
const packaged = (f) => (prefix && f.startsWith(prefix) ? f.slice(prefix.length) : f);

// What runs on its own: the program. The audit verifier's worker thread, started from its own file, is bundled apart
// below (WORKER).
const ENTRIES = ['cli'];
const EXTERNAL = [
  'better-sqlite3',
  'sharp',
  'commander',
  '@foundry-rs/*',
  '@aws-sdk/*',
  '@google-cloud/*',
  '@grpc/*',
  '@ledgerhq/*',
  'rxjs',
];

// import() of a CommonJS package: node's import() gives its exports by name and as `default`; the split bundle gives
// them as `default` only, so a destructured import() works on the sources and is undefined in the bundle (tlock-js's
// was: the sandbox's keeper could decrypt no vote). The build refuses such an import() unless the code takes
// `.default` (`(await import('tlock-js')).default`), which is right in both.
const commonJsImports = {
  name: 'commonjs-imports',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.kind !== 'dynamic-import' || args.pluginData === 'checked') return undefined;
      const r = await b.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: 'checked',
      });
      if (r.errors.length || r.external || !isCommonJs(r.path)) return undefined;
      const text = readFileSync(args.importer, 'utf8');
      const name = args.path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
      const all = text.match(new RegExp(`import\\((['"])${name}\\1\\)`, 'g'))?.length ?? 0;
      const taken = text.match(new RegExp(`\\(await import\\((['"])${name}\\1\\)\\)\\.default\\b`, 'g'))?.length ?? 0;
      if (taken < all)
        return {
          errors: [{ text: `import('${args.path}') of a CommonJS package: take its exports from (await import('${args.path}')).default` }],
        };
      return undefined;
    });
  },
};

function isCommonJs(file) {
  if (file.endsWith('.cjs')) return true;
  if (file.endsWith('.mjs')) return false;
  for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg)) return JSON.parse(readFileSync(pkg, 'utf8')).type !== 'module';
  }
  return true;
}

// A clean dist/: no chunk of an earlier build left behind.
rmSync(dist, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: ENTRIES.map((e) => path.join(from, `${e}.js`)),
  outbase: from,
  outdir: dist,
  entryNames: '[dir]/[name]',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  // Split as ES modules, then each file turned into a CommonJS module below (toCommonJs): CommonJS modules have
  // `require`, `__filename` and `__dirname` of their own, which the bundled CommonJS packages use (undici requires
  // node's modules; write-file-atomic seeds its temporary names with its own path); `import.meta.url` becomes the
  // file's URL.
  banner: { js: 'const __loopsignUrl = require("node:url").pathToFileURL(__filename).href;' },
  define: { 'import.meta.url': '__loopsignUrl' },
  legalComments: 'none',
  metafile: true,
  plugins: [commonJsImports],
  logLevel: 'warning',
});

// The audit verifier's worker (src/evidence/audit-worker.ts): one CommonJS file with everything it runs, started once
// per worker thread by each streamed verification. A worker whose entry is an ES module boots node's ES module loader
// first, then opens and links the entry and the shared chunks it imports one by one; a CommonJS file is compiled at
// once. On this suite's 2-core machine a worker cost ~39 ms of CPU from start to its first reports with the split ES
// module entry, ~31 ms with this file; node's own start of a worker that only posts a message is ~23 ms. The code is
// also in the program's chunks, for the main thread: some 14 kB twice in the package, each copy compiled by its thread.
const WORKER = 'evidence/audit-worker';
const worker = await build({
  absWorkingDir: root,
  entryPoints: [path.join(from, `${WORKER}.js`)],
  outfile: path.join(dist, `${WORKER}.cjs`),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
});

// Each file of the split bundle as a CommonJS module (.cjs), which bin/load-chunks.cjs compiles with the V8 code cache
// scripts/code-cache.mjs makes for it: node 20 gives no code cache to ES modules. `import()` of another file becomes a
// `require` when it runs, so a command still loads only the files it reaches.
const { transform } = await import('esbuild');
const renamed = {};
for (const file of Object.keys(result.metafile.outputs)) {
  if (!file.endsWith('.js')) continue;
  const full = path.join(root, file);
  const { code } = await transform(readFileSync(full, 'utf8'), {
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    supported: { 'dynamic-import': false },
    logLevel: 'warning',
  });
  // 'use strict': the code was written, and bundled, as ES modules, which are strict; a CommonJS file is not unless it says so.
  const cjs = code.replace(/require\("(\.{1,2}\/[^"]*)\.js"\)/g, 'require("$1.cjs")');
  writeFileSync(full.replace(/\.js$/, '.cjs'), cjs.startsWith('"use strict";') ? cjs : `"use strict";\n${cjs}`);
  rmSync(full);
  renamed[file] = file.replace(/\.js$/, '.cjs');
}
for (const [from, to] of Object.entries(renamed)) {
  result.metafile.outputs[to] = result.metafile.outputs[from];
  delete result.metafile.outputs[from];
}

// For the tests: each output file with the modules in it, relative to the package root (build/… or node_modules/…),
// and what it imports from outside the bundle.
const meta = {};
for (const [file, out] of [...Object.entries(result.metafile.outputs), ...Object.entries(worker.metafile.outputs)])
  meta[packaged(file)] = {
    modules: Object.keys(out.inputs).map(packaged),
    external: [...new Set(out.imports.filter((i) => i.external).map((i) => i.path))],
  };
writeFileSync(path.join(from, 'bundle-meta.json'), JSON.stringify(meta, null, 1) + '\n');

// Every npm package with code in the bundle, with its version and its licence text.
const packages = new Map();
for (const input of [...Object.keys(result.metafile.inputs), ...Object.keys(worker.metafile.inputs)]) {
  const m = /^(.*node_modules\/((?:@[^/]+\/)?[^/]+))\//.exec(input);
  if (m && !packages.has(m[2])) packages.set(m[2], path.join(root, m[1]));
}
const notices = [...packages]
  .sort(([a], [b]) => a.localeCompare(b))
  .map(([name, dir]) => {
    const { version, license } = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    const file = readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    const text = file ? readFileSync(path.join(dir, file), 'utf8').trim() : `(${license ?? 'no licence named'}; no licence file)`;
    return `${name} ${version}\n\n${text}\n`;
  });
writeFileSync(
  path.join(dist, 'THIRD-PARTY-LICENSES.txt'),
  `The npm packages bundled into loopsign's dist/ (scripts/bundle.mjs), each with its licence.\n\n${notices.join(`\n${'-'.repeat(72)}\n\n`)}`,
);
if (!existsSync(path.join(dist, 'cli.cjs'))) throw new Error('bundle: dist/cli.cjs was not written');
