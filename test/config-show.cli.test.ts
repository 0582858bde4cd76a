// `config show` says what the commands will use (issue 36, item 7): the service URL they call (not only the
// configured baseUrl, "(none)" while read-only commands call production) and where the password comes from (a file
// named in the environment was reported as `passwordStatus [unset]`).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeHome, runCli } from './helpers/cli.js';

describe('config show', () => {
  it('prints the effective service URL and where the password comes from', async () => {
    const home = makeHome();
    const pw = home.passwordFile('config-show-password');
    const r = await runCli(['--json', 'config', 'show'], home, { env: { LOOPSIGN_PASSWORD_FILE: pw } });
    expect(r.code, r.stderr).toBe(0);
    const s = r.json().settings;
    expect(s.baseUrl.value ?? null).toBeNull();
    expect(s.serviceUrl).toMatchObject({ value: 'https://www.rateloop.ai' });
    expect(s.serviceUrl.source).toMatch(/read-only/);
    expect(s.passwordSource).toEqual({ value: `file ${pw}`, source: 'env LOOPSIGN_PASSWORD_FILE' });
    expect(s.passwordStatus.value).not.toBe('[unset]');

    const text = await runCli(['config', 'show'], home, { env: { LOOPSIGN_PASSWORD_FILE: pw } });
    expect(text.stdout).toMatch(/serviceUrl\s+https:\/\/www\.rateloop\.ai/);
    expect(text.stdout).toMatch(/passwordSource\s+file /);
  });

  it('names the variable, or says there is no source; on the sandbox chain without a manifest, no service at all', async () => {
    const home = makeHome();
    const env = await runCli(['--json', 'config', 'show'], home, { env: { LOOPSIGN_PASSWORD: 'config-show-env-pw' } });
    expect(env.json().settings.passwordSource.value).toBe('environment variable LOOPSIGN_PASSWORD');
    const none = await runCli(['--json', 'config', 'show'], home);
    expect(none.json().settings.passwordSource.value).toMatch(/^none: /);
    const manifest = path.join(home.dir, 'no-sandbox', 'manifest.json');
    const sandbox = await runCli(['--json', '--chain-id', '31337', 'config', 'show'], home, {
      env: { LOOPSIGN_SANDBOX_MANIFEST: manifest },
    });
    expect(sandbox.code, sandbox.stderr).toBe(0);
    expect(sandbox.json().settings.serviceUrl.value).toBeNull();
    expect(sandbox.json().settings.serviceUrl.source).toContain(manifest);
  });
});
