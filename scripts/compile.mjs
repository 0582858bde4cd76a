// First step of `npm run build`: transpiles src/ into build/, one JavaScript file per TypeScript module, with esbuild.
// Type checking is `npm run typecheck` (tsc), run by CI (.ci/run) and before publishing: tsc took about 20 CPU-s on
// this suite's 2-core machine each time anything was built (the test run's build, the package test's pack), where
// transpiling takes under one. That is only sound because every module can be compiled on its own:
// tsconfig.json sets isolatedModules, so tsc refuses what a per-file compiler would get wrong (a re-exported type, a
// const enum used across files).
// build/ is what tests, bench and scripts import module by module; scripts/bundle.mjs bundles it into dist/.
import { build } from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');
// LOOPSIGN_BUILD_OUT: the folder to write build/ under (scripts/build.mjs gives a folder of the build's own, moved into
// place once the whole build is done); without it, the checkout.
const out = path.join(process.env.LOOPSIGN_BUILD_OUT || root, 'build');

function modules(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return modules(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

// A module deleted from src/ must not live on in build/.
rmSync(out, { recursive: true, force: true });
await build({
  entryPoints: modules(src),
  outdir: out,
  outbase: src,
  bundle: false,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  tsconfig: path.join(root, 'tsconfig.json'),
  logLevel: 'warning',
});
