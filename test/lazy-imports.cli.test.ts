// `--help` and `--version` must stay instant: they may not load viem, tlock-js, undici, ora or the MCP SDK. The
// program is bundled (scripts/bundle.mjs): what a run loaded is read as the source modules in the files it opened.
import { describe, expect, it } from 'vitest';
import { CHAIN_READ, importsOf, modulesIn } from './helpers/bundle-imports.js';

const HEAVY = ['viem', 'tlock-js', 'undici', 'ora', '@modelcontextprotocol', '@noble/curves', 'zod', 'hono'];
const isHeavy = (m: string) => HEAVY.some((h) => m.includes(`node_modules/${h}/`));

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
    const modules = modulesIn(urls);
    // --version and the top-level --help are answered by the bin itself; everything else goes through the commander program.
    expect(urls.some((u) => u.includes('/dist/cli.cjs'))).toBe(args.length > 1 || (args[0] !== '--version' && args[0] !== '--help'));
    expect(urls.some((u) => u.includes('/bin/loopsign.js'))).toBe(true);
    expect(modules.filter(isHeavy)).toEqual([]);
    // Command definitions (commands/define.js, commands/*.def.js) are the help text; no handler module is loaded.
    expect(modules.filter((m) => m.startsWith('build/commands/') && !/\/commands\/(define|[\w-]+\.def)\.js$/.test(m))).toEqual([]);
  });

  it('status loads only what a lookup needs: not the ask flow, the store, nor zod beyond its English messages', () => {
    // A service that is not there: the run fails after its handler's modules are loaded, which is what is checked.
    const args = ['--base-url', 'http://127.0.0.1:9', '--chain-id', '31337', 'status', '--operation-key', `0x${'1'.repeat(64)}`];
    const modules = modulesIn(importsOf(args));
    expect(modules).toContain('build/commands/lookups.js');
    const askFlow = /^build\/(ask\/flow|store\/|wallet\/(plan-guard|executor|keystore|unlock))/;
    expect(modules.filter((m) => askFlow.test(m))).toEqual([]);
    expect(modules.filter((m) => m.includes('node_modules/zod/v4/locales/') && !m.endsWith('/en.js'))).toEqual([]);
  });

  it('the recorder does see heavy modules when a command really needs them', () => {
    const modules = modulesIn(importsOf(CHAIN_READ));
    expect(modules.some((m) => m.startsWith('node_modules/viem/'))).toBe(true);
    expect(modules.filter(isHeavy).length).toBeGreaterThan(1);
  });
});
