// Loads the program's files (dist/*.cjs, dist/chunks/*.cjs: the split bundle as CommonJS, scripts/bundle.mjs), each
// compiled with the V8 code cache beside it (<file>.v8, made at build time by scripts/code-cache.mjs): node 20 gives no
// code cache to ES modules, and compiling the program's code was a large part of a short command's CPU. A cache is
// used only when it was made from this very file (its first 32 bytes are the file's SHA-256: V8 itself checks only the
// source's length) and V8 accepts it (the same node, the same flags); otherwise the file compiles as it would without.
// Nothing here writes a cache at run time.
'use strict';
const { createHash } = require('node:crypto');
const { readFileSync, readdirSync, writeFileSync } = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const vm = require('node:vm');

const loaded = new Map();
const compiled = [];
// Set while the caches are written: each file is compiled under its name in the package (dist/chunks/…). A script
// made from a code cache keeps the name it was compiled under (V8 restores it with the code), so a cache compiled
// under the build's absolute path would put the builder's folder in every stack trace of an installed package.
let packageRoot;

function load(file) {
  const known = loaded.get(file);
  if (known) return known.exports;
  const source = readFileSync(file, 'utf8');
  const script = new vm.Script(Module.wrap(source), {
    filename: packageRoot ? path.relative(packageRoot, file) : file,
    cachedData: cacheFor(file, source),
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  // Kept only while the caches are written: a command has no use for its files' sources once they are compiled.
  if (packageRoot) compiled.push({ file, source, script });
  const module = { exports: {} };
  loaded.set(file, module);
  const nodeRequire = Module.createRequire(file);
  const dir = path.dirname(file);
  // The program's own files through this loader, everything else (node's modules, the native addons, the optional
  // signer SDKs) through node's require from the file's place.
  const requireHere = (id) => (id.startsWith('./') || id.startsWith('../') ? load(path.resolve(dir, id)) : nodeRequire(id));
  try {
    script.runInThisContext().call(module.exports, module.exports, requireHere, module, file, dir);
  } catch (error) {
    // As node's require: a file whose code threw is not kept half-made; the next require runs it again and throws again.
    loaded.delete(file);
    throw error;
  }
  return module.exports;
}

function cacheFor(file, source) {
  let data;
  try {
    data = readFileSync(`${file}.v8`);
  } catch {
    return undefined;
  }
  const hash = createHash('sha256').update(source).digest();
  return data.length > 32 && hash.equals(data.subarray(0, 32)) ? data.subarray(32) : undefined;
}

/** The program's entry (dist/cli.cjs): its exports. */
exports.loadProgram = (dist) => load(path.join(dist, 'cli.cjs'));

/** Build time: load every file of the program (each module's own code runs, no command), then write each one's cache. */
exports.writeCaches = (dist) => {
  packageRoot = path.dirname(dist);
  load(path.join(dist, 'cli.cjs'));
  for (const f of readdirSync(path.join(dist, 'chunks'))) if (f.endsWith('.cjs')) load(path.join(dist, 'chunks', f));
  let bytes = 0;
  for (const { file, source, script } of compiled) {
    const data = Buffer.concat([createHash('sha256').update(source).digest(), script.createCachedData()]);
    writeFileSync(`${file}.v8`, data);
    bytes += data.length;
  }
  return { files: compiled.length, bytes };
};
