// The package's version, in one place: the package's own package.json (the one the installed files came with). The
// program's --version and the MCP server's name read it here; bin/loopsign.js, which answers `--version` before
// loading the program, reads the same file itself without loading any of dist/.
import { readFileSync } from 'node:fs';
import { packageFile } from './package-root.js';

export function packageVersion(): string {
  return (JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string }).version;
}
