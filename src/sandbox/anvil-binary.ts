// Finding an anvil binary: LOOPSIGN_ANVIL, then the optional npm package, then anvil on PATH.
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { UsageError } from '../errors.js';
import { expandHome } from '../paths.js';

export interface AnvilBinary {
  path: string;
  from: 'LOOPSIGN_ANVIL' | 'npm package' | 'PATH';
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function findAnvil(): AnvilBinary {
  const fromEnv = process.env.LOOPSIGN_ANVIL ? expandHome(process.env.LOOPSIGN_ANVIL, 'LOOPSIGN_ANVIL') : undefined;
  if (fromEnv) {
    if (!executable(fromEnv)) throw new UsageError('anvil_not_found', `LOOPSIGN_ANVIL=${fromEnv} is not an executable file`);
    return { path: fromEnv, from: 'LOOPSIGN_ANVIL' };
  }
  try {
    const pkg = createRequire(import.meta.url).resolve('@foundry-rs/anvil-linux-amd64/package.json');
    const bin = path.join(path.dirname(pkg), 'bin', 'anvil');
    if (executable(bin)) return { path: bin, from: 'npm package' };
  } catch {
    // optional dependency not installed (other platform, or --omit=optional)
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && executable(path.join(dir, 'anvil'))) return { path: path.join(dir, 'anvil'), from: 'PATH' };
  }
  throw new UsageError('anvil_not_found', 'no anvil binary found for the sandbox chain', {
    hint: 'on linux-x64 run `npm install` (the optional @foundry-rs/anvil-linux-amd64 package ships it); elsewhere install Foundry (https://getfoundry.sh) or set LOOPSIGN_ANVIL to an anvil binary',
  });
}
