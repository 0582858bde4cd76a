// The package's version, in one place: package.json beside dist/ (the one the installed files came with). The
// program's --version, the MCP server's name and bin/loopsign.js (which answers `--version` before loading the
// program) read it here. Nothing but node:fs: the bin imports this on its fastest path.
import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}
