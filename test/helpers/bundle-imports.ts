// What a run of the built binary loaded, in the terms of the sources: the program runs from a bundle
// (scripts/bundle.mjs), whose files are chunks with hashed names, so each dist/ file a run opened is mapped to the
// modules esbuild put in it (build/bundle-meta.json: build/… for loopsign's own, node_modules/… for a package's).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, ROOT } from './cli.js';

/** A command that loads the chain code (viem): `wallet balance` against an RPC that is not there. */
export const CHAIN_READ = [
  '--chain-id',
  '31337',
  '--rpc-url',
  'http://127.0.0.1:9',
  'wallet',
  'balance',
  '--address',
  '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
];

/** Every URL a run of `loopsign args` resolved (test/helpers/record-imports.mjs). */
export function importsOf(args: string[]): string[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-imports-'));
  const log = path.join(dir, 'imports.log');
  try {
    spawnSync(process.execPath, ['--import', path.join(ROOT, 'test/helpers/record-imports.mjs'), BIN, ...args], {
      env: { ...process.env, LOOPSIGN_IMPORT_LOG: log },
      stdio: 'ignore',
    });
    return readFileSync(log, 'utf8').trim().split('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each file of dist/: the modules esbuild put in it, and what it imports from outside the bundle. */
export type BundleMeta = Record<string, { modules: string[]; external: string[] }>;
let meta: BundleMeta | undefined;

export function bundleMeta(): BundleMeta {
  meta ??= JSON.parse(readFileSync(path.join(ROOT, 'build', 'bundle-meta.json'), 'utf8')) as BundleMeta;
  return meta;
}

/** The source modules inside the dist/ files among `urls`, as paths from the repository root; other URLs as they are. */
export function modulesIn(urls: string[]): string[] {
  const out = new Set<string>();
  for (const url of urls) {
    const file = url.startsWith('file:') ? path.relative(ROOT, fileURLToPath(url)) : url;
    for (const m of bundleMeta()[file]?.modules ?? [file]) out.add(m);
  }
  return [...out];
}
