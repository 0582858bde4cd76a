// Evidence from a live sandbox: trusted keys (current and retired), pins, a packet for a settled round, the audit
// chain of every sandbox action and the coverage export — downloaded with the built binary and the owner's browser
// session cookie (the only credential these routes take), verified on the way in, saved privately without
// clobbering, and tampered or substituted copies refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { registerSecret, runCli, SETTLE_TIMEOUT, type Home } from './helpers/cli.js';
import { capture } from './helpers/capture.js';
import { api, type SandboxHandle } from './helpers/sandbox.js';
import { openSession } from './helpers/chain.js';

let sb: SandboxHandle;
let home: Home;
let apiKey: string;
let cookie: string;
let cookieFile: string;
let runId: string;
const run = (args: string[], env: Record<string, string | undefined> = {}) => runCli(args, home, { env: { ...sb.env(), ...env } });
const cookieArgs = () => ['--session-cookie-file', cookieFile];
const workspace = () => sb.info as unknown as { workspace: { id: string; apiKeyFile: string; sessionCookieFile: string } };
const ws = () => workspace().workspace.id;
const mode = (file: string) => statSync(file).mode & 0o777;

beforeAll(async () => {
  ({ sb, home } = await openSession({ autoAdvance: true, pollAfterMs: 200 }));
  apiKey = readFileSync(workspace().workspace.apiKeyFile, 'utf8').trim();
  registerSecret(apiKey);
  cookieFile = workspace().workspace.sessionCookieFile;
  cookie = readFileSync(cookieFile, 'utf8').trim();
  registerSecret(cookie);
  const file = home.file(
    'ask.json',
    JSON.stringify({
      chainId: 31337,
      clientRequestId: `evidence-${Date.now()}`,
      maxPaymentAmount: '1500000',
      bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
      question: {
        title: 'Evidence run',
        contextUrl: `https://example.com/evidence/${process.pid}-${Date.now()}`,
        categoryId: '1',
        tags: ['evidence'],
      },
    }),
  );
  const r = await run(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', '--wait', '--timeout', SETTLE_TIMEOUT]);
  expect(r.code, r.stderr).toBe(0);
  runId = `run_${r.json().contentIds[0]}`;
  // The trusted keys every test below reads, so that none depends on another having run first.
  const keys = await run(['--json', 'evidence', 'keys', '--out', path.join(home.dir, 'trusted-keys.json')]);
  expect(keys.code, keys.stderr).toBe(0);
});
afterAll(async () => {
  await sb.stop();
});

describe('trusted keys and pins', () => {
  it('downloads the public keys (no account): one current, one retired; the workspace pin route takes the session cookie', async () => {
    const out = path.join(home.dir, 'downloaded-keys.json');
    const r = await run(['--json', 'evidence', 'keys', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(
      r
        .json()
        .keys.map((k: { status: string }) => k.status)
        .sort(),
    ).toEqual(['current', 'retired']);
    expect(mode(out)).toBe(0o600);
    const current = r.json().keys.find((k: { status: string }) => k.status === 'current');
    const pin = path.join(home.dir, 'current.spki.txt');
    expect((await run(['evidence', 'pin', '--key-id', current.keyId, '--out', pin])).code).toBe(0);
    const route = `/api/account/workspaces/${ws()}/assurance/trusted-keys?format=spki&keyId=${current.keyId}`;
    const spki = await api(sb.info.baseUrl, 'GET', route, undefined, { cookie: `__Host-rateloop-session=${cookie}` });
    expect(spki.body).toBe(readFileSync(pin, 'utf8'));
    expect(spki.headers.get('x-rateloop-evidence-key-id')).toBe(current.keyId);
    const bad = await api(sb.info.baseUrl, 'GET', `/api/account/workspaces/${ws()}/assurance/trusted-keys?format=pem`, undefined, {
      cookie: `__Host-rateloop-session=${cookie}`,
    });
    expect(bad.body.code).toBe('trusted_evidence_key_download_invalid');
    // As the service: the API key is not looked at on these routes.
    const key = await api(sb.info.baseUrl, 'GET', route, undefined, { authorization: `Bearer ${apiKey}` });
    expect(key).toMatchObject({ status: 401, body: { code: 'authentication_required' } });
  });
});

describe('run evidence', () => {
  it('fetches the packet of a settled round, verifies it against the pinned keys, writes it privately', async () => {
    const tk = path.join(home.dir, 'trusted-keys.json');
    const out = path.join(home.dir, 'packet.json');
    const r = await run([
      '--json',
      'evidence',
      'fetch',
      'run',
      runId,
      '--workspace',
      ws(),
      '--trusted-keys',
      tk,
      '--out',
      out,
      ...cookieArgs(),
    ]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ kind: 'packet', valid: true, errors: [], written: out });
    expect(mode(out)).toBe(0o600);
    const packet = JSON.parse(readFileSync(out, 'utf8'));
    expect(packet.payload.schemaVersion).toBe('rateloop.human-assurance.evidence.v4');
    expect(packet.payload.runId).toBe(runId);
    expect(packet.payload.aggregation.judgmentCoverage.validJudgmentCount).toBe(3);
    const key = packet.signing.keyId;
    const pin = path.join(home.dir, 'run.spki.txt');
    await run(['evidence', 'pin', '--key-id', key, '--out', pin, '--trusted-keys', tk]);
    expect((await run(['verify-evidence', out, '--public-key', pin, '--key-id', key])).code).toBe(0);
    // The key id is optional with a pin: the one derived from the pin is expected.
    const derived = await run(['--json', 'verify-evidence', out, '--public-key', pin]);
    expect(derived.code, derived.stdout).toBe(0);
    expect(derived.json().checks.find((c: { id: string }) => c.id === 'key_id')).toMatchObject({ status: 'pass', expected: key });
    packet.payload.aggregation.cases[0].outcome = packet.payload.aggregation.cases[0].outcome === 'pass' ? 'fail' : 'pass';
    const tampered = home.file('tampered-packet.json', JSON.stringify(packet));
    const t = await run(['--json', 'verify-evidence', tampered, '--public-key', pin, '--key-id', key]);
    expect(t.code).toBe(8);
    expect(t.json().error.errors).toEqual(expect.arrayContaining(['packet_digest_mismatch', 'aggregation_mismatch', 'signature_invalid']));
  });

  it('never overwrites without --force, replaces atomically at 0600 with it, and never writes through a symlink', async () => {
    const tk = path.join(home.dir, 'trusted-keys.json');
    const fetch = (out: string, ...more: string[]) =>
      run(['--json', 'evidence', 'fetch', 'run', runId, '--workspace', ws(), '--trusted-keys', tk, '--out', out, ...cookieArgs(), ...more]);
    const out = home.file('existing.json', 'precious\n');
    const kept = await fetch(out);
    expect(kept.code).toBe(2);
    expect(kept.json().error).toMatchObject({ code: 'file_exists', hint: expect.stringMatching(/--force/) });
    expect(readFileSync(out, 'utf8')).toBe('precious\n');
    const forced = await fetch(out, '--force');
    expect(forced.code, forced.stdout).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8')).payload.runId).toBe(runId);
    expect(mode(out)).toBe(0o600);
    // A link at the target is refused even with --force; what it points to is untouched, and so is the link.
    const target = home.file('link-target.txt', 'not yours\n');
    const link = path.join(home.dir, 'link.json');
    symlinkSync(target, link);
    for (const more of [[], ['--force']]) {
      const l = await fetch(link, ...more);
      expect(l.code).toBe(2);
      expect(l.json().error.code).toBe('symlink_refused');
    }
    expect(readFileSync(target, 'utf8')).toBe('not yours\n');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    // The same rules for pins and saved trusted keys.
    const pinOut = home.file('pin-existing.txt', 'x\n');
    const key = JSON.parse(readFileSync(tk, 'utf8')).keys[0].keyId;
    expect((await run(['--json', 'evidence', 'pin', '--key-id', key, '--out', pinOut, '--trusted-keys', tk])).json().error.code).toBe(
      'file_exists',
    );
    expect((await run(['--json', 'evidence', 'keys', '--out', link, '--force'])).json().error.code).toBe('symlink_refused');
  });

  it('an archived run signed with the retired key still verifies', async () => {
    const r = await run([
      '--json',
      'evidence',
      'fetch',
      'run',
      'run_archived_example',
      '--workspace',
      ws(),
      '--trusted-keys',
      path.join(home.dir, 'trusted-keys.json'),
      '--out',
      path.join(home.dir, 'archived.json'),
      ...cookieArgs(),
    ]);
    expect(r.code, r.stdout).toBe(0);
    const keys = JSON.parse(readFileSync(path.join(home.dir, 'trusted-keys.json'), 'utf8')).keys;
    const packet = JSON.parse(readFileSync(path.join(home.dir, 'archived.json'), 'utf8'));
    expect(keys.find((k: { keyId: string }) => k.keyId === packet.signing.keyId).status).toBe('retired');
  });

  it('an unknown run is the service error, exit 3', async () => {
    const r = await run([
      '--json',
      'evidence',
      'fetch',
      'run',
      'run_999999',
      '--workspace',
      ws(),
      '--trusted-keys',
      path.join(home.dir, 'trusted-keys.json'),
      ...cookieArgs(),
    ]);
    expect(r.code).toBe(3);
    expect(r.json().error.code).toBe('assurance_evidence_not_found');
  });

  it('hostile: a validly signed packet of another run is refused (exit 8, run_id_mismatch) and nothing is written', async () => {
    await sb.control('/__sandbox/hostile', { scenario: 'evidence_other_run', count: 1 });
    const out = path.join(home.dir, 'substituted.json');
    const r = await run([
      '--json',
      'evidence',
      'fetch',
      'run',
      runId,
      '--workspace',
      ws(),
      '--trusted-keys',
      path.join(home.dir, 'trusted-keys.json'),
      '--out',
      out,
      ...cookieArgs(),
    ]);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(r.code, r.stdout).toBe(8);
    const error = r.json().error;
    // The signature is fine: only the run differs.
    expect(error.errors).toEqual(['run_id_mismatch']);
    expect(error.mismatch).toMatchObject({ field: 'payload.runId', expected: runId });
    expect(error.mismatch.actual).not.toBe(runId);
    expect(error.message).toMatch(/not the ".*" asked for; nothing was written/);
    expect(existsSync(out)).toBe(false);
    capture.count('hostile scenarios refused with exit 8', 'evidence_other_run');
  });
});

describe('audit chain and coverage export', () => {
  it('the audit chain covers the sandbox actions and verifies; a tampered copy names the first broken link', async () => {
    const out = path.join(home.dir, 'audit.json');
    const r = await run(['--json', 'evidence', 'fetch', 'audit', '--workspace', ws(), '--out', out, ...cookieArgs()]);
    expect(r.code, r.stdout).toBe(0);
    const chain = JSON.parse(readFileSync(out, 'utf8'));
    const actions = chain.events.map((e: { action: string }) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['agent.asks', 'agent.asks.key.confirm']));
    expect(r.json().eventCount).toBe(chain.events.length);
    const head = chain.integrity.headDigest;
    expect((await run(['verify-evidence', '--audit', out, '--expected-head', head])).code).toBe(0);
    chain.events[1].result = 'failure';
    writeFileSync(out, JSON.stringify(chain));
    const t = await run(['--json', 'verify-evidence', '--audit', out]);
    expect(t.code).toBe(8);
    expect(t.json().error).toMatchObject({ errors: ['event_digest_mismatch'], sequence: 2 });
  });

  it('the coverage export verifies; a tampered copy does not', async () => {
    const out = path.join(home.dir, 'coverage.json');
    const r = await run(['--json', 'evidence', 'fetch', 'coverage', '--workspace', ws(), '--out', out, ...cookieArgs()]);
    expect(r.code, r.stdout).toBe(0);
    const body = JSON.parse(readFileSync(out, 'utf8'));
    body.counts.decisions += 1;
    writeFileSync(out, JSON.stringify(body));
    const t = await run(['--json', 'verify-evidence', out]);
    expect(t.code).toBe(8);
    expect(t.json().error.errors).toEqual(['export_digest_mismatch']);
  });
});

describe('the credential these routes take: a browser session cookie, from a file or a named variable', () => {
  const audit = (...more: string[]) => [
    '--json',
    'evidence',
    'fetch',
    'audit',
    '--workspace',
    ws(),
    '--out',
    path.join(home.dir, `audit-${Math.random()}.json`),
    ...more,
  ];

  it('without a cookie: refused before any request (exit 6), even with a workspace API key set', async () => {
    const none = await run(audit(), { LOOPSIGN_API_KEY: apiKey });
    expect(none.code).toBe(6);
    expect(none.json().error).toMatchObject({
      code: 'session_cookie_required',
      message: expect.stringMatching(/browser session cookie, not a workspace API key/),
    });
  });

  it('a cookie the service refuses: exit 6, naming the credential the route wanted', async () => {
    const stale = home.file('stale-cookie', `${'A'.repeat(43)}\n`);
    const r = await run(audit('--session-cookie-file', stale));
    expect(r.code).toBe(6);
    expect(r.json().error).toMatchObject({
      code: 'authentication_required',
      message: expect.stringMatching(/HTTP 401.*session cookie __Host-rateloop-session, not a workspace API key/),
    });
  });

  it('from an environment variable named by the user, and from a copied Cookie header', async () => {
    const env = await run(audit('--session-cookie-env', 'MY_RATELOOP_SESSION'), { MY_RATELOOP_SESSION: cookie });
    expect(env.code, env.stdout).toBe(0);
    const unset = await run(audit('--session-cookie-env', 'MY_RATELOOP_SESSION'));
    expect(unset.code).toBe(6);
    expect(unset.json().error.code).toBe('session_cookie_missing');
    // A value given where the name belongs is refused, and never echoed.
    for (const value of ['x'.repeat(43), `${'aB3_-'.repeat(8)}z`]) {
      const asValue = await run(audit('--session-cookie-env', value));
      expect([2, 6]).toContain(asValue.code);
      expect(asValue.stdout + asValue.stderr).not.toContain(value);
    }
    const header = home.file('cookie-header', `Cookie: theme=dark; __Host-rateloop-session=${cookie}; other=1\n`);
    expect((await run(audit('--session-cookie-file', header))).code).toBe(0);
    const neither = home.file('cookie-other', 'theme=dark; other=1\n');
    const n = await run(audit('--session-cookie-file', neither));
    expect(n.code).toBe(6);
    expect(n.json().error.code).toBe('session_cookie_invalid');
  });

  it('another workspace is the service error', async () => {
    const other = await run(['--json', 'evidence', 'fetch', 'audit', '--workspace', 'ws_other', ...cookieArgs()]);
    expect(other.code).toBe(3);
    expect(other.json().error.code).toBe('workspace_not_found');
  });
});
