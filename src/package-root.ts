// The folder loopsign is installed in (package.json, bin/, dist/), found from where this code runs. The program is
// bundled (scripts/bundle.mjs), so a module's code may sit in dist/ or in dist/chunks/, and in tests it runs from
// src/ or build/: a path written relative to one module's own file would be right in one of those and wrong in
// another. The nearest folder above with a package.json is the root in all of them.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
  root = dir;
  return dir;
}

/** A file of the installed package, by its path from the package's root. */
export function packageFile(...parts: string[]): string {
  return path.join(packageRoot(), ...parts);
}
