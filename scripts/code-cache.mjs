// Part of `npm run build`, after scripts/bundle.mjs: the V8 code cache of each file of dist/ (bin/load-chunks.cjs),
// made in a process of its own that loads every file once and runs no command.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// LOOPSIGN_BUILD_OUT: the folder holding the dist/ to cache (scripts/build.mjs); without it, the checkout.
const dist = path.join(process.env.LOOPSIGN_BUILD_OUT || root, 'dist');
const r = spawnSync(
  process.execPath,
  [
    '-e',
    `const r = require(${JSON.stringify(path.join(root, 'bin', 'load-chunks.cjs'))}).writeCaches(${JSON.stringify(dist)}); console.log(JSON.stringify(r));`,
  ],
  { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
);
if (r.status !== 0) throw new Error(`code-cache: exit ${r.status}`);
const { files, bytes } = JSON.parse(r.stdout);
if (files < 2) throw new Error('code-cache: no files cached');
