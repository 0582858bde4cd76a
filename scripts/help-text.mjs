// Part of `npm run build`: renders the top-level help with the real program (commander, every definition) and
// stores it as dist/help.txt, which bin/loopsign.js prints for `--help`, `-h` and no arguments without loading
// the program. Rendered through a pipe, so at the 80 columns the program wraps help to at most;
// test/cold-start.cli.test.ts fails if the stored text differs from what the program renders.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// LOOPSIGN_BUILD_OUT: the folder holding the dist/ to render from and write to (scripts/build.mjs); without it, the checkout.
const dist = path.join(process.env.LOOPSIGN_BUILD_OUT || root, 'dist');
const cli = path.join(dist, 'cli.cjs');
const r = spawnSync(
  process.execPath,
  [
    '--input-type=module',
    '-e',
    `const { createRequire } = await import('node:module'); const { main } = createRequire(${JSON.stringify(cli)})(${JSON.stringify(cli)}); process.exitCode = await main([process.argv0, 'loopsign', '--help']);`,
  ],
  {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
if (r.status !== 0 || !r.stdout.startsWith('Usage: loopsign')) throw new Error(`rendering the help failed (exit ${r.status})`);
writeFileSync(path.join(dist, 'help.txt'), r.stdout);
