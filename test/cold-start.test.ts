// Only the command that runs is defined (src/cli.ts): each name in COMMAND_NAMES defines the command of that name,
// and global options before the command do not hide it. In-process, on the sources; what the bin prints and loads
// (dist/help.txt, the import log of a run) is test/cold-start.cli.test.ts.
import { describe, expect, it } from 'vitest';
import { buildProgram, COMMAND_NAMES } from '../src/cli.js';
import { Output } from '../src/output.js';

describe('only the command that runs is defined', () => {
  const out = () => new Output({ json: false, quiet: true, debug: false });

  it("each name in the list defines the command of that name, and all of them make --help's list, in order", async () => {
    for (const name of COMMAND_NAMES) {
      const program = await buildProgram(out(), ['node', 'loopsign', '--json', name, '--help']);
      expect(program.commands.map((c: any) => c.name())).toEqual([name]);
    }
    const all = await buildProgram(out(), ['node', 'loopsign', 'help']);
    expect(all.commands.map((c: any) => c.name())).toEqual(COMMAND_NAMES);
  });

  it('global options and their values before the command are skipped; anything else gets every command', async () => {
    const names = async (args: string[]) => (await buildProgram(out(), ['node', 'loopsign', ...args])).commands.map((c: any) => c.name());
    expect(await names(['--rpc-url', 'ask', '--chain-id', '31337', 'status'])).toEqual(['status']);
    expect(await names(['--chain-id=31337', 'quote'])).toEqual(['quote']);
    for (const args of [[], ['nonsense'], ['--', 'ask'], ['--json']]) expect(await names(args)).toEqual(COMMAND_NAMES);
  });
});
