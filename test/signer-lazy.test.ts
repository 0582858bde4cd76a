// A signer SDK that is not installed (they are optional) is one usage line naming the install command, not a crash.
// Which SDKs each signer source loads, in the compiled modules the CLI runs: test/signer-lazy.cli.test.ts.
import { describe, expect, it } from 'vitest';
import { loadSdk } from '../src/wallet/signers/load-sdk.js';
import { UsageError } from '../src/errors.js';

describe('signer SDKs load lazily', () => {
  it('a missing SDK is one usage line with the install command', async () => {
    const error = await loadSdk(() => import('@loopsign-test/no-such-sdk' as string), {
      install: '@loopsign-test/no-such-sdk@1.2.3',
      forWhat: '--signer test',
    }).catch((e) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect(error.code).toBe('signer_sdk_missing');
    expect(error.message).toBe('--signer test needs @loopsign-test/no-such-sdk, which is not installed');
    // Into loopsign's own folder (a package beside a global install could not be imported), with the exact versions.
    expect(error.hint).toMatch(/npm install --no-save --prefix "[^"]+" @loopsign-test\/no-such-sdk@1\.2\.3/);
  });
});
