// Bad input, property-based (fast-check): random CLI arguments through the built binary give a documented exit code
// and no stack trace. The argv is what is fuzzed, so it runs the binary (a fixed seed, a fixed number of cases; a failure prints the command that replays it);
// ask files, evidence, exports, keystores and service responses are fuzzed in-process in test/fuzz.test.ts.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ExitCode } from '../src/errors.js';
import { makeHome, runCli } from './helpers/cli.js';
import { capture } from './helpers/capture.js';
import { assertAsyncProperty } from './helpers/property.js';

const DOCUMENTED = new Set<number>(Object.values(ExitCode));

describe('fuzzing', () => {
  it('CLI arguments: random argv gives a documented exit code and no stack trace', async () => {
    const home = makeHome();
    const words = [
      'ask',
      'quote',
      'rate',
      'commit',
      'status',
      'wallet',
      'new',
      'verify-evidence',
      'evidence',
      'pin',
      'upload-image',
      '--json',
      '--file',
      '--chain-id',
      '5',
      '--stake',
      'NaN',
      '--up',
      '--down',
      '--prediction',
      '101',
      '--content-id',
      '-1',
      '--timeout',
      '0',
      'x.json',
      '--offline',
      '--key-id',
      'ed25519:zz',
      '--',
      '--password',
      '--atomic',
    ];
    let tried = 0;
    await assertAsyncProperty(
      fc.asyncProperty(fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 6 }), async (args) => {
        tried++;
        const r = await runCli(args, home, {
          env: { LOOPSIGN_CHAIN_ID: '31337', LOOPSIGN_BASE_URL: 'http://127.0.0.1:9', LOOPSIGN_RPC_URL: 'http://127.0.0.1:9' },
          timeoutMs: 60_000,
        });
        expect(DOCUMENTED.has(r.code), `${args.join(' ')} → ${r.code}`).toBe(true);
        expect(r.code, args.join(' ')).not.toBe(ExitCode.internal);
        expect(r.stderr, args.join(' ')).not.toMatch(/\n\s+at [\w.<>]+ \(/);
      }),
      { numRuns: 40, seed: 42 },
    );
    capture.count('fuzz inputs tried', 'CLI argument vectors', tried);
  });
});
