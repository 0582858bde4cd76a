// Did-you-mean for misspelled options everywhere (issue 36, item 7): a misspelled option is reported as unknown, with
// commander's suggestion, before any "required option … not specified" it caused (`ask --fille x` used to say only
// that --file was missing). Exit 2, nothing read or sent.
import { describe, expect, it } from 'vitest';
import { makeHome, runCli } from './helpers/cli.js';

const CASES: [string[], string, string][] = [
  [['ask', '--fille', 'x.json'], '--fille', '--file'],
  [['quote', '--fil', 'x.json'], '--fil', '--file'],
  [['confirm', '--operation-kye', '0x00'], '--operation-kye', '--operation-key'],
  [['check-plan', '--ask', 'a.json', '--respons', 'b.json'], '--respons', '--response'],
  [['mcp', 'config', '--hots', 'claude'], '--hots', '--host'],
  [['evidence', 'pin', '--key-di', 'x', '--out', 'pin.json'], '--key-di', '--key-id'],
  [['status', '--operation-kye', '0x00'], '--operation-kye', '--operation-key'],
  [['wallet', 'balance', '--adress', '0x00'], '--adress', '--address'],
];

describe('a misspelled option', () => {
  for (const [args, typed, meant] of CASES) {
    it(`loopsign ${args.join(' ')}: unknown ${typed}, did you mean ${meant}`, async () => {
      const r = await runCli(['--json', ...args], makeHome());
      expect(r.code, r.stdout + r.stderr).toBe(2);
      const e = r.json().error;
      expect(e.code).toBe('unknown_option');
      expect(e.message).toBe(`unknown option '${typed}'`);
      expect(e.hint).toContain(`did you mean ${meant}?`);
    });
  }
  it('still says a required option is missing when nothing is misspelled, and --help still helps', async () => {
    const r = await runCli(['--json', 'ask'], makeHome());
    expect(r.code).toBe(2);
    expect(r.json().error.code).toBe('missing_mandatory_option_value');
    const help = await runCli(['ask', '--fille', 'x', '--help'], makeHome());
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--file <ask\.json>/);
  });
});
