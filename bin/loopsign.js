#!/usr/bin/env node
// Entry point: runs the compiled CLI. No TypeScript at run time.
import { main } from '../dist/cli.js';

main(process.argv).then((code) => {
  process.exitCode = code;
});
