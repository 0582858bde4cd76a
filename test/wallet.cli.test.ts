// The wallet commands end to end, with the built binary, including every credential failure and exit code.
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import { copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import {
  filesUnder,
  findSecret,
  makeHome,
  runCli,
  registerSecret,
  TEST_ADDRESS,
  TEST_PRIVATE_KEY,
  VECTOR_PASSWORD,
  VECTORS,
} from './helpers/cli.js';
import { findAnvil } from '../src/sandbox/anvil-binary.js';
import { decryptKeystore, encryptKeystore, parsePrivateKey } from '../src/wallet/keystore.js';

const mode = (file: string) => (statSync(file).mode & 0o777).toString(8);

describe('loopsign wallet', () => {
  it('creates a keystore (0600 in a 0700 folder), refuses to overwrite it, and unlocks it', async () => {
    const home = makeHome();
    const pw = home.passwordFile('first wallet password');
    const created = await runCli(['--json', 'wallet', 'new', '--password-file', pw], home);
    expect(created.code).toBe(0);
    const doc = created.json();
    expect(doc.ok).toBe(true);
    expect(doc.address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(mode(doc.keystore)).toBe('600');
    expect(mode(path.dirname(doc.keystore))).toBe('700');
    const ks = JSON.parse(readFileSync(doc.keystore, 'utf8'));
    expect(ks.crypto.kdfparams.n).toBe(262144);
    expect(created.stderr).toContain('"event":"keystore.encrypt"');

    const again = await runCli(['--json', 'wallet', 'new', '--password-file', pw], home);
    expect(again.code).toBe(6);
    expect(again.json().error.code).toBe('keystore_exists');
    expect(readFileSync(doc.keystore, 'utf8')).toBe(JSON.stringify(ks, null, 2) + '\n');

    const addr = await runCli(['wallet', 'address'], home);
    expect(addr.code).toBe(0);
    expect(addr.stdout.trim()).toBe(doc.address);

    const replaced = await runCli(['--json', 'wallet', 'new', '--force'], home, { env: { LOOPSIGN_PASSWORD: 'second password' } });
    registerSecret('second password');
    expect(replaced.code).toBe(0);
    expect(replaced.json().address).not.toBe(doc.address);
    expect(filesUnder(home.dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('imports a private key from stdin (never argv) and from a file', async () => {
    const home = makeHome();
    const r = await runCli(['--json', 'wallet', 'import'], home, {
      input: TEST_PRIVATE_KEY + '\n',
      env: { LOOPSIGN_PASSWORD: 'stdin import pw' },
    });
    registerSecret('stdin import pw');
    expect(r.code).toBe(0);
    expect(r.json().address).toBe(TEST_ADDRESS);

    const home2 = makeHome();
    const keyFile = home2.file('key.txt', TEST_PRIVATE_KEY.slice(2));
    const r2 = await runCli(['wallet', 'import', '--private-key-file', keyFile, '--password-env', 'MY_PW'], home2, {
      env: { MY_PW: 'file import pw' },
    });
    registerSecret('file import pw');
    expect(r2.code).toBe(0);
    expect(r2.stdout).toContain(TEST_ADDRESS);

    const bad = await runCli(['--json', 'wallet', 'import'], makeHome(), { input: 'not a key', env: { LOOPSIGN_PASSWORD: 'x-pw-1234' } });
    expect(bad.code).toBe(6);
    expect(bad.json().error.code).toBe('invalid_private_key');
  });

  it('imports the shared v3 vector keystore and re-encrypts it under the same password', async () => {
    const home = makeHome();
    const pw = home.passwordFile(VECTOR_PASSWORD);
    const r = await runCli(
      ['--json', 'wallet', 'import', '--keystore-file', path.join(VECTORS, 'keystore-v3-vector.json'), '--password-file', pw],
      home,
    );
    expect(r.code).toBe(0);
    const doc = r.json();
    expect(doc.address).toBe(TEST_ADDRESS);
    const ks = JSON.parse(readFileSync(doc.keystore, 'utf8'));
    expect(ks.crypto.kdfparams.n).toBe(262144);
    const addr = await runCli(['--json', 'wallet', 'address'], home);
    expect(addr.json().address).toBe(TEST_ADDRESS);
  });

  it('uses a keystore in place (--keystore) and exports an encrypted copy', async () => {
    const home = makeHome();
    const pw = home.passwordFile(VECTOR_PASSWORD);
    const ks = path.join(home.dir, 'vector.json');
    copyFileSync(path.join(VECTORS, 'keystore-v3-vector.json'), ks);
    const out = path.join(home.dir, 'backup', 'copy.json');
    const r = await runCli(['--json', '--keystore', ks, 'wallet', 'export', '--out', out], home);
    expect(r.code).toBe(0);
    expect(mode(out)).toBe('600');
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(JSON.parse(readFileSync(ks, 'utf8')));
    const again = await runCli(['--json', '--keystore', ks, 'wallet', 'export', '--out', out], home);
    expect(again.code).toBe(2);
    expect(again.json().error.code).toBe('file_exists');
    expect(findSecret(readFileSync(out, 'utf8'))).toBeUndefined();
    void pw;
  });

  it.each([
    ['a wrong password', 'vector', 'wrong_password'],
    ['a missing keystore', 'missing', 'keystore_not_found'],
    ['unreadable JSON', 'garbage', 'keystore_invalid'],
    ['a wrong-format file', 'wrongformat', 'keystore_invalid'],
    ['no password source', 'nopassword', 'password_required'],
  ])('gives exit 6 and one clear message for %s', async (_name, kind, code) => {
    const home = makeHome();
    const ks = path.join(home.dir, 'ks.json');
    if (kind === 'vector' || kind === 'nopassword') copyFileSync(path.join(VECTORS, 'keystore-v3-vector.json'), ks);
    // Make the cast-style file carry no address, so unlocking is needed to learn the address.
    if (kind === 'vector' || kind === 'nopassword') {
      const j = JSON.parse(readFileSync(ks, 'utf8'));
      delete j.address;
      writeFileSync(ks, JSON.stringify(j));
    }
    if (kind === 'garbage') writeFileSync(ks, '{not json');
    if (kind === 'wrongformat') writeFileSync(ks, JSON.stringify({ version: 1, Crypto: {} }));
    const env = kind === 'nopassword' ? {} : { LOOPSIGN_PASSWORD: 'definitely wrong' };
    const text = await runCli(['--keystore', ks, 'wallet', 'address'], home, { env });
    expect(text.code).toBe(6);
    const lines = text.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^error: /);
    expect(text.stderr).not.toMatch(/\n\s+at /);
    const json = await runCli(['--json', '--keystore', ks, 'wallet', 'address'], home, { env });
    expect(json.code).toBe(6);
    expect(json.json().error.code).toBe(code);
  });

  it('refuses a weak keystore (exit 6, hint: wallet rekey) unless --allow-weak-kdf; wallet rekey makes it n=2^18 and it unlocks', async () => {
    const home = makeHome();
    const ks = path.join(home.dir, 'weak.json');
    const weak = await encryptKeystore(parsePrivateKey(TEST_PRIVATE_KEY), 'weak keystore pw', { n: 2 });
    delete (weak as { address?: string }).address; // as cast writes it: the address needs an unlock
    writeFileSync(ks, JSON.stringify(weak), { mode: 0o600 });
    const pw = home.passwordFile('weak keystore pw');
    const refused = await runCli(['--keystore', ks, '--password-file', pw, 'wallet', 'address'], home);
    expect(refused.code).toBe(6);
    expect(refused.stderr.trim().split('\n')).toEqual([
      "error: the keystore's key derivation (scrypt n=2, r=8, p=1) is weaker than any common wallet writes, so its password is cheap to guess",
      'hint: run `loopsign wallet rekey` to re-encrypt it at scrypt n=2^18 (or pass --allow-weak-kdf to use it once as it is)',
    ]);
    expect((await runCli(['--json', '--keystore', ks, '--password-file', pw, 'wallet', 'address'], home)).json().error.code).toBe(
      'weak_kdf',
    );
    const allowed = await runCli(['--json', '--allow-weak-kdf', '--keystore', ks, '--password-file', pw, 'wallet', 'address'], home);
    expect(allowed.json().address).toBe(TEST_ADDRESS);

    const rekeyed = await runCli(['--json', '--keystore', ks, '--password-file', pw, 'wallet', 'rekey'], home);
    expect(rekeyed.code, rekeyed.stdout).toBe(0);
    expect(rekeyed.json()).toMatchObject({
      address: TEST_ADDRESS,
      keystore: ks,
      before: { kdf: 'scrypt', n: 2 },
      after: { kdf: 'scrypt', n: 262144 },
      passwordChanged: false,
    });
    expect(JSON.parse(readFileSync(ks, 'utf8')).crypto.kdfparams.n).toBe(262144);
    expect(mode(ks)).toBe('600');
    expect((await runCli(['--json', '--keystore', ks, '--password-file', pw, 'wallet', 'address'], home)).json().address).toBe(
      TEST_ADDRESS,
    );

    // A new password from a named variable (never argv); the old one no longer unlocks.
    registerSecret('rekeyed new pw');
    const changed = await runCli(
      ['--json', '--keystore', ks, '--password-file', pw, 'wallet', 'rekey', '--new-password-env', 'NEW_WALLET_PW'],
      home,
      { env: { NEW_WALLET_PW: 'rekeyed new pw' } },
    );
    expect(changed.json().passwordChanged).toBe(true);
    const after = JSON.parse(readFileSync(ks, 'utf8'));
    await expect(decryptKeystore(after, 'weak keystore pw')).rejects.toThrow(/wrong password/);
    expect((await decryptKeystore(after, 'rekeyed new pw')).address).toBe(TEST_ADDRESS);
    expect(findSecret(readFileSync(ks, 'utf8'))).toBeUndefined();
  });

  it('imports a weak keystore (it is re-encrypted at n=2^18 anyway)', async () => {
    const home = makeHome();
    const src = home.file(
      'weak-src.json',
      JSON.stringify(await encryptKeystore(parsePrivateKey(TEST_PRIVATE_KEY), 'import weak pw', { n: 16 })),
    );
    const r = await runCli(
      ['--json', 'wallet', 'import', '--keystore-file', src, '--password-file', home.passwordFile('import weak pw')],
      home,
    );
    expect(r.code, r.stdout).toBe(0);
    expect(JSON.parse(readFileSync(r.json().keystore, 'utf8')).crypto.kdfparams.n).toBe(262144);
  });

  it('accepts LOOPSIGN_PRIVATE_KEY for throwaway wallets, with a warning', async () => {
    const home = makeHome();
    const r = await runCli(['--json', 'wallet', 'address'], home, { env: { LOOPSIGN_PRIVATE_KEY: TEST_PRIVATE_KEY } });
    expect(r.code).toBe(0);
    expect(r.json().address).toBe(TEST_ADDRESS);
    expect(r.stderr).toContain('LOOPSIGN_PRIVATE_KEY');
  });

  it('shows a debug stack trace only under --debug', async () => {
    const home = makeHome();
    const plain = await runCli(['--keystore', path.join(home.dir, 'none.json'), 'wallet', 'address'], home);
    expect(plain.stderr).not.toMatch(/\n\s+at /);
    const debug = await runCli(['--debug', '--keystore', path.join(home.dir, 'none.json'), 'wallet', 'address'], home);
    expect(debug.code).toBe(6);
    expect(debug.stderr).toMatch(/\n\s+at /);
  });

  describe('balance against a real chain', () => {
    let anvil: ChildProcess;
    let rpc: string;

    beforeAll(async () => {
      const port = await new Promise<number>((resolve) => {
        const s = createServer().listen(0, '127.0.0.1', () => {
          const p = (s.address() as { port: number }).port;
          s.close(() => resolve(p));
        });
      });
      anvil = spawn(findAnvil().path, ['--host', '127.0.0.1', '--port', String(port), '--silent'], { stdio: 'ignore' });
      rpc = `http://127.0.0.1:${port}`;
      for (let i = 0; i < 100; i++) {
        try {
          const res = await fetch(rpc, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
          });
          if (res.ok) break;
        } catch {
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    });
    afterAll(() => {
      anvil?.kill('SIGTERM');
    });

    it('reads the ETH balance and says which tokens are not configured', async () => {
      const home = makeHome();
      const r = await runCli(['--json', '--chain-id', '31337', '--rpc-url', rpc, 'wallet', 'balance', '--address', TEST_ADDRESS], home);
      expect(r.code).toBe(0);
      const eth = r.json().balances.find((b: { symbol: string }) => b.symbol === 'ETH');
      expect(eth.formatted).toBe('10000');
    });

    it('refuses an RPC on another chain with exit 4', async () => {
      const home = makeHome();
      const r = await runCli(['--json', '--chain-id', '8453', '--rpc-url', rpc, 'wallet', 'balance', '--address', TEST_ADDRESS], home);
      expect(r.code).toBe(4);
      expect(r.json().error.code).toBe('rpc_chain_mismatch');
    });

    it('reports an unreachable RPC with exit 4', async () => {
      const home = makeHome();
      const r = await runCli(
        ['--json', '--chain-id', '31337', '--rpc-url', 'http://127.0.0.1:9', 'wallet', 'balance', '--address', TEST_ADDRESS],
        home,
      );
      expect(r.code).toBe(4);
      expect(r.json().error.code).toBe('rpc_unreachable');
    });
  });
});
