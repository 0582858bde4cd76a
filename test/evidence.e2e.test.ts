// Evidence from a live sandbox: trusted keys (current and retired), pins, a packet for a settled round, the audit
// chain of every sandbox action and the coverage export — downloaded with the built binary, verified on the way
// in, and tampered copies refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { makeHome, registerSecret, runCli, type Home } from './helpers/cli.js';
import { api, startSandbox, type SandboxHandle } from './helpers/sandbox.js';

let sb: SandboxHandle;
let home: Home;
let apiKey: string;
let runId: string;
const run = (args: string[], env: Record<string, string | undefined> = {}) => runCli(args, home, { env: { ...sb.env(), LOOPSIGN_API_KEY: apiKey, ...env } });

beforeAll(async () => {
  sb = await startSandbox(['--auto-advance']);
  await sb.control('/__sandbox/settings', { pollAfterMs: 200 });
  home = makeHome();
  registerSecret(readFileSync(sb.info.devWallet.passwordFile, 'utf8').trim());
  apiKey = readFileSync((sb.info as unknown as { workspace: { apiKeyFile: string } }).workspace.apiKeyFile, 'utf8').trim();
  registerSecret(apiKey);
  const file = home.file('ask.json', JSON.stringify({
    chainId: 31337, clientRequestId: `evidence-${Date.now()}`, maxPaymentAmount: '1500000',
    bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
    question: { title: 'Evidence run', contextUrl: 'https://example.com/evidence', categoryId: '1', tags: ['evidence'] },
  }));
  const r = await run(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', '--wait', '--timeout', '120']);
  expect(r.code, r.stderr).toBe(0);
  runId = `run_${r.json().contentIds[0]}`;
}, 120_000);
afterAll(async () => {
  await sb.stop();
});

describe('trusted keys and pins', () => {
  it('downloads the public keys (no account): one current, one retired', async () => {
    const out = path.join(home.dir, 'trusted-keys.json');
    const r = await run(['--json', 'evidence', 'keys', '--out', out], { LOOPSIGN_API_KEY: undefined });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().keys.map((k: { status: string }) => k.status).sort()).toEqual(['current', 'retired']);
    const current = r.json().keys.find((k: { status: string }) => k.status === 'current');
    const pin = path.join(home.dir, 'current.spki.txt');
    expect((await run(['evidence', 'pin', '--key-id', current.keyId, '--out', pin])).code).toBe(0);
    const spki = await api(sb.info.baseUrl, 'GET', `/api/account/workspaces/ws_sandbox/assurance/trusted-keys?format=spki&keyId=${current.keyId}`, undefined, { authorization: `Bearer ${apiKey}` });
    expect(spki.body).toBe(readFileSync(pin, 'utf8'));
    expect(spki.headers.get('x-rateloop-evidence-key-id')).toBe(current.keyId);
    const bad = await api(sb.info.baseUrl, 'GET', '/api/account/workspaces/ws_sandbox/assurance/trusted-keys?format=pem', undefined, { authorization: `Bearer ${apiKey}` });
    expect(bad.body.code).toBe('trusted_evidence_key_download_invalid');
  });
});

describe('run evidence', () => {
  it('fetches the packet of a settled round, verifies it against the pinned keys, writes it', async () => {
    const tk = path.join(home.dir, 'trusted-keys.json');
    const out = path.join(home.dir, 'packet.json');
    const r = await run(['--json', 'evidence', 'fetch', 'run', runId, '--workspace', 'ws_sandbox', '--trusted-keys', tk, '--out', out]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ kind: 'packet', valid: true, errors: [] });
    const packet = JSON.parse(readFileSync(out, 'utf8'));
    expect(packet.payload.schemaVersion).toBe('rateloop.human-assurance.evidence.v4');
    expect(packet.payload.aggregation.judgmentCoverage.validJudgmentCount).toBe(3);
    const key = packet.signing.keyId;
    const pin = path.join(home.dir, 'run.spki.txt');
    await run(['evidence', 'pin', '--key-id', key, '--out', pin, '--trusted-keys', tk]);
    expect((await run(['verify-evidence', out, '--public-key', pin, '--key-id', key])).code).toBe(0);
    packet.payload.aggregation.cases[0].outcome = packet.payload.aggregation.cases[0].outcome === 'pass' ? 'fail' : 'pass';
    const tampered = home.file('tampered-packet.json', JSON.stringify(packet));
    const t = await run(['--json', 'verify-evidence', tampered, '--public-key', pin, '--key-id', key]);
    expect(t.code).toBe(8);
    expect(t.json().error.errors).toEqual(expect.arrayContaining(['packet_digest_mismatch', 'aggregation_mismatch', 'signature_invalid']));
  });

  it('an archived run signed with the retired key still verifies', async () => {
    const r = await run(['--json', 'evidence', 'fetch', 'run', 'run_archived_example', '--workspace', 'ws_sandbox', '--trusted-keys', path.join(home.dir, 'trusted-keys.json'), '--out', path.join(home.dir, 'archived.json')]);
    expect(r.code, r.stdout).toBe(0);
    const keys = JSON.parse(readFileSync(path.join(home.dir, 'trusted-keys.json'), 'utf8')).keys;
    const packet = JSON.parse(readFileSync(path.join(home.dir, 'archived.json'), 'utf8'));
    expect(keys.find((k: { keyId: string }) => k.keyId === packet.signing.keyId).status).toBe('retired');
  });

  it('an unknown run is the service error, exit 3', async () => {
    const r = await run(['--json', 'evidence', 'fetch', 'run', 'run_999999', '--workspace', 'ws_sandbox', '--trusted-keys', path.join(home.dir, 'trusted-keys.json')]);
    expect(r.code).toBe(3);
    expect(r.json().error.code).toBe('assurance_evidence_not_found');
  });
});

describe('audit chain and coverage export', () => {
  it('the audit chain covers the sandbox actions and verifies; a tampered copy names the first broken link', async () => {
    const out = path.join(home.dir, 'audit.json');
    const r = await run(['--json', 'evidence', 'fetch', 'audit', '--workspace', 'ws_sandbox', '--out', out]);
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
    const r = await run(['--json', 'evidence', 'fetch', 'coverage', '--workspace', 'ws_sandbox', '--out', out]);
    expect(r.code, r.stdout).toBe(0);
    const body = JSON.parse(readFileSync(out, 'utf8'));
    body.counts.decisions += 1;
    writeFileSync(out, JSON.stringify(body));
    const t = await run(['--json', 'verify-evidence', out]);
    expect(t.code).toBe(8);
    expect(t.json().error.errors).toEqual(['export_digest_mismatch']);
  });

  it('authenticated routes need the workspace API key', async () => {
    const none = await run(['--json', 'evidence', 'fetch', 'audit', '--workspace', 'ws_sandbox'], { LOOPSIGN_API_KEY: undefined });
    expect(none.code).toBe(2);
    expect(none.json().error.code).toBe('api_key_required');
    const wrong = await run(['--json', 'evidence', 'fetch', 'audit', '--workspace', 'ws_sandbox'], { LOOPSIGN_API_KEY: 'lsk_wrong' });
    expect(wrong.code).toBe(3);
    expect(wrong.json().error.code).toBe('unauthorized');
    const other = await run(['--json', 'evidence', 'fetch', 'audit', '--workspace', 'ws_other']);
    expect(other.json().error.code).toBe('workspace_not_found');
  });
});
