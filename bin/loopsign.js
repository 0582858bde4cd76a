#!/usr/bin/env node
// Entry point: runs the compiled CLI. No TypeScript at run time.
// `--version` alone, and the top-level help (`--help`, `-h`, or nothing), are answered here: they need no command
// tree, and loading commander and the definitions would double their cost. The help is the text the program
// itself rendered at build time (scripts/help-text.mjs); a terminal narrower than its 80 columns, or a build
// without it, gets commander's own rendering.
const args = process.argv.slice(2);
let help;
if (args.length === 0 || (args.length === 1 && (args[0] === '--help' || args[0] === '-h'))) {
  if (!process.stdout.isTTY || process.stdout.columns >= 80) {
    const { readFileSync } = await import('node:fs');
    try {
      help = readFileSync(new URL('../dist/help.txt', import.meta.url), 'utf8');
    } catch {
      // not built with its help text: commander renders it
    }
  }
}
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  // The package's own package.json, beside bin/ (src/version.ts reads the same file for the program).
  const { readFileSync } = await import('node:fs');
  process.stdout.write(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version + '\n');
} else if (help !== undefined) {
  process.stdout.write(help);
  process.exitCode = args.length === 0 ? 2 : 0; // as the program: no command at all is a usage error
} else {
  // The program's files, each with its code cache (bin/load-chunks.cjs).
  const { createRequire } = await import('node:module');
  const { loadProgram } = createRequire(import.meta.url)('./load-chunks.cjs');
  const { main, endProcess } = loadProgram(new URL('../dist', import.meta.url).pathname);
  await endProcess(await main(process.argv));
}
