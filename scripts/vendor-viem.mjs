// Part of `npm run build`, after tsc: viem (with ox, abitype, @noble and @scure under it) is some 500 ES modules,
// which node opens, reads and links one by one: 220–260 ms of every command that signs or reads the chain, against
// about 50 ms for the same code bundled (bench/cold-start.mjs). So esbuild bundles the two entry points loopsign
// uses, `viem` and `viem/accounts`, into dist/vendor/ (code they share is split into common chunks, so there is one
// copy of each class), and the compiled imports of those two specifiers in dist/ are pointed at the bundles. The
// sources keep importing `viem`, whose types tsc checks as before; the bundle is built from the installed viem, so
// its version is package-lock.json's. test/cold-start.cli.test.ts fails if a compiled file still imports viem itself.
import { build } from 'esbuild';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const vendor = path.join(dist, 'vendor');
const version = JSON.parse(readFileSync(path.join(root, 'node_modules', 'viem', 'package.json'), 'utf8')).version;

// The specifiers loopsign imports, and the bundle each becomes.
const ENTRIES = { viem: 'viem', 'viem/accounts': 'viem-accounts' };

rmSync(vendor, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: Object.entries(ENTRIES).map(([specifier, out]) => ({ in: specifier, out })),
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outdir: vendor,
  banner: { js: `// viem ${version}, bundled by scripts/vendor-viem.mjs (MIT licence: node_modules/viem/LICENSE).` },
  logLevel: 'warning',
});

const IMPORT = /(\bfrom\s*|\bimport\(\s*)(['"])(viem|viem\/accounts)\2/g;
let rewritten = 0;
for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.js')) continue;
  const file = path.join(entry.parentPath, entry.name);
  if (file.startsWith(vendor + path.sep)) continue;
  const text = readFileSync(file, 'utf8');
  const next = text.replace(IMPORT, (_m, keyword, quote, specifier) => {
    let to = path
      .relative(path.dirname(file), path.join(vendor, `${ENTRIES[specifier]}.js`))
      .split(path.sep)
      .join('/');
    if (!to.startsWith('.')) to = `./${to}`;
    return `${keyword}${quote}${to}${quote}`;
  });
  if (next !== text) {
    writeFileSync(file, next);
    rewritten++;
  }
}
if (rewritten === 0) throw new Error('vendor-viem: no compiled file imports viem; is the build order right?');
