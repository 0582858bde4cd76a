// Signer SDKs are optional and heavy: loading the wallet factory loads none of them, and opening one source loads
// only its own (the transpiled modules in build/, the modules the bundle is made of, which leaves the SDKs to node_modules:
// needs `npm run build`). A missing SDK is one usage line:
// test/signer-lazy.test.ts.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './helpers/cli.js';

const SDKS = ['@aws-sdk', '@smithy', '@google-cloud', 'google-gax', '@grpc', '@ledgerhq', 'rxjs'];

function importsOf(script: string): string[] {
  const log = path.join(mkdtempSync(path.join(tmpdir(), 'loopsign-signer-imports-')), 'imports.log');
  const run = spawnSync(
    process.execPath,
    ['--import', path.join(ROOT, 'test/helpers/record-imports.mjs'), '--input-type=module', '-e', script],
    {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOOPSIGN_IMPORT_LOG: log },
      encoding: 'utf8',
    },
  );
  expect(run.status, run.stderr).toBe(0);
  return readFileSync(log, 'utf8').trim().split('\n');
}
const sdkUrls = (urls: string[]) => urls.filter((u) => SDKS.some((s) => u.includes(`/node_modules/${s}/`)));
const built = (file: string) => pathToFileURL(path.join(ROOT, 'build', file)).href;

describe('signer SDKs load lazily', () => {
  it('the factory, the grammar and an RPC wallet load no SDK', () => {
    const urls = importsOf(`
      const { openWallet } = await import('${built('wallet/signers/open.js')}');
      const { resolveSigner } = await import('${built('wallet/signers/spec.js')}');
      const r = resolveSigner({ flags: { signer: 'rpc:http://127.0.0.1:9', from: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' }, env: {}, file: {} });
      const w = await openWallet(r, { config: {}, out: { progress() {}, warn() {} }, chainId: 31337 });
      await w.account.catch((e) => { if (e.code !== 'signer_unreachable') throw e; });`);
    expect(urls.some((u) => u.endsWith('/build/wallet/signers/open.js'))).toBe(true);
    expect(sdkUrls(urls)).toEqual([]);
  });

  it('an AWS wallet loads the AWS SDK and no other', () => {
    const urls = importsOf(`
      const { openWallet } = await import('${built('wallet/signers/open.js')}');
      const w = await openWallet({ source: { kind: 'aws', keyId: 'alias/x' }, from: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' }, { config: {}, out: { progress() {}, warn() {} }, chainId: 31337, aws: { clientConfig: { endpoint: 'http://127.0.0.1:9', region: 'us-east-1', maxAttempts: 1, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } } } });
      await w.account.catch((e) => { if (e.code !== 'kms_unavailable') throw e; });`);
    expect(sdkUrls(urls).some((u) => u.includes('/@aws-sdk/client-kms/'))).toBe(true);
    expect(sdkUrls(urls).filter((u) => /@google-cloud|google-gax|@ledgerhq/.test(u))).toEqual([]);
  });
});
