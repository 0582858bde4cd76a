// What the npm tarball must carry to run (the bundled program with its worker and version entry, its help text, the
// licences of the packages bundled into it) and what it must not (sources, tests, fixtures, source maps, tsc's
// build/): shared by scripts/smoke-package.mjs (CI) and test/package.cli.test.ts.
export const REQUIRED_FILES = [
  'bin/loopsign.js',
  'bin/load-chunks.cjs',
  'package.json',
  'README.md',
  'dist/cli.cjs',
  'dist/cli.cjs.v8',
  'dist/evidence/audit-worker.cjs',
  'dist/help.txt',
  'dist/THIRD-PARTY-LICENSES.txt',
  'docs/cli.md',
];

/** The problems with a tarball's file list (paths relative to the package root); empty when it is right. */
export function packageProblems(files) {
  const problems = REQUIRED_FILES.filter((f) => !files.includes(f)).map((f) => `lacks ${f}`);
  const stray = files.filter(
    (f) => /^(src|test|scripts|bench|coverage|build|\.ci|node_modules)\//.test(f) || /\.(map|ts|mts|tsbuildinfo|sol)$/.test(f),
  );
  if (stray.length) problems.push(`carries files that do not run: ${stray.slice(0, 5).join(', ')}${stray.length > 5 ? ', …' : ''}`);
  return problems;
}
