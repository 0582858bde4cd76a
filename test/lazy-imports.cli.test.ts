// `--help` and `--version` must stay instant: they may not load viem, tlock-js, undici, ora or the MCP SDK.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BIN, ROOT } from './helpers/cli.js';

const HEAVY = ['viem', 'tlock-js', 'undici', 'ora', '@modelcontextprotocol', '@noble/curves', 'zod', 'hono'];
// viem itself is loaded from its bundle in dist/vendor (scripts/vendor-viem.mjs).
const isHeavy = (u: string) => u.includes('/dist/vendor/') || HEAVY.some((h) => u.includes(`/node_modules/${h}`));

function importsOf(args: string[]): string[] {
  const log = path.join(mkdtempSync(path.join(tmpdir(), 'loopsign-imports-')), 'imports.log');
  spawnSync(process.execPath, ['--import', path.join(ROOT, 'test/helpers/record-imports.mjs'), BIN, ...args], {
    env: { ...process.env, LOOPSIGN_IMPORT_LOG: log },
    stdio: 'ignore',
  });
  return readFileSync(log, 'utf8').trim().split('\n');
}

describe('lazy command loading', () => {
  it.each([
    [['--version']],
    [['--help']],
    [['wallet', '--help']],
    [['wallet', 'balance', '--help']],
    [['ask', '--help']],
    [['rate', 'commit', '--help']],
    [['review', 'wait', '--help']],
    [['projects', 'create', '--help']],
    [['runs', 'status', '--help']],
    [['mcp', '--help']],
  ])('loopsign %j loads no heavy module', (args) => {
    const urls = importsOf(args);
    // --version and the top-level --help are answered by the bin itself; everything else goes through the commander program.
    expect(urls.some((u) => u.includes('/dist/cli.js'))).toBe(args.length > 1 || (args[0] !== '--version' && args[0] !== '--help'));
    expect(urls.some((u) => u.includes('/bin/loopsign.js'))).toBe(true);
    const heavy = urls.filter(isHeavy);
    expect(heavy).toEqual([]);
    // Command definitions (commands/define.js, commands/*.def.js) are the help text; no handler module is loaded.
    expect(urls.filter((u) => u.includes('/dist/commands/') && !/\/commands\/(define|[\w-]+\.def)\.js$/.test(u))).toEqual([]);
  });

  it('the recorder does see heavy modules when a command really needs them', () => {
    const urls = importsOf([
      '--chain-id',
      '31337',
      '--rpc-url',
      'http://127.0.0.1:9',
      'wallet',
      'balance',
      '--address',
      '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    ]);
    expect(urls.some((u) => u.endsWith('/dist/vendor/viem.js'))).toBe(true);
    expect(urls.filter(isHeavy).length).toBeGreaterThan(1);
  });
});
