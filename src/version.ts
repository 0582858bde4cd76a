// The package's version, in one place: the package's own package.json (the one the installed files came with). The
// program's --version, the MCP server's name and bin/loopsign.js (which answers `--version` before loading the
// program) read it here. Nothing but node:fs and node:path: the bin imports this on its fastest path.
import { readFileSync } from 'node:fs';
import { packageFile } from './package-root.js';

export function packageVersion(): string {
  return (JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string }).version;
}
