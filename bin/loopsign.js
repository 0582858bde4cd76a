#!/usr/bin/env node
// Entry point: runs the compiled CLI. No TypeScript at run time.
// `--version` alone is answered here: it needs no command tree, and loading commander would double its cost.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const { readFileSync } = await import('node:fs');
  process.stdout.write(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version + '\n');
} else {
  const { main } = await import('../dist/cli.js');
  process.exitCode = await main(process.argv);
}
