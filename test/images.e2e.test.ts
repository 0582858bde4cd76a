// Images, handoffs and signing links with the built binary against a sandbox: PNG, JPEG and WEBP uploads approved
// and usable in an ask; bad files refused before any network call; hostile upload messages refused; links created,
// read, and expired.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { filesUnder, makeHome, registerSecret, runCli, type Home } from './helpers/cli.js';
import { startSandbox, type SandboxHandle } from './helpers/sandbox.js';
import { capture } from './helpers/capture.js';

let sb: SandboxHandle;
let home: Home;
const run = (args: string[], env: Record<string, string> = {}) => runCli(args, home, { env: { ...sb.env(), ...env } });

function png(width: number, height: number, extra = 64): Buffer {
  const ihdr = Buffer.alloc(25);
  ihdr.writeUInt32BE(13, 0);
  ihdr.write('IHDR', 4, 'latin1');
  ihdr.writeUInt32BE(width, 8);
  ihdr.writeUInt32BE(height, 12);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ihdr, Buffer.alloc(extra, 7)]);
}
function jpeg(width: number, height: number): Buffer {
  const sof = Buffer.from([0xff, 0xc0, 0x00, 0x11, 0x08, height >> 8, height & 0xff, width >> 8, width & 0xff, 0x03]);
  return Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.alloc(14, 0), sof, Buffer.alloc(32, 1), Buffer.from([0xff, 0xd9])]);
}
function webp(width: number, height: number): Buffer {
  const b = Buffer.alloc(40);
  b.write('RIFF', 0, 'latin1');
  b.writeUInt32LE(32, 4);
  b.write('WEBPVP8X', 8, 'latin1');
  b.writeUIntLE(width - 1, 24, 3);
  b.writeUIntLE(height - 1, 27, 3);
  return b;
}

beforeAll(async () => {
  sb = await startSandbox();
  home = makeHome();
  registerSecret(readFileSync(sb.info.devWallet.passwordFile, 'utf8').trim());
}, 60_000);
afterAll(async () => {
  await sb.stop();
});

const UPLOAD_HOSTILE = ['upload_wrong_wallet', 'upload_wrong_payload_hash', 'upload_wrong_action', 'upload_far_expiry'];
const LINK_HOSTILE: [string, string, string][] = [
  ['handoff_foreign_origin', 'handoff', 'foreign_link_origin'],
  ['handoff_token_in_query', 'handoff', 'link_token_in_query'],
  ['signing_link_foreign_origin', 'sign-link', 'foreign_link_origin'],
];

describe('upload-image', () => {
  it.each([
    ['shot.png', () => png(1600, 900)],
    ['photo.jpg', () => jpeg(1920, 1080)],
    ['art.webp', () => webp(1280, 720)],
  ])('%s is approved and its URL carries the #sha256= fragment and serves the bytes', async (name, make) => {
    const bytes = make();
    const file = home.file(name, bytes.toString('latin1'));
    writeFileSync(file, bytes);
    const r = await run(['--json', 'upload-image', file]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const img = r.json().images[0];
    const sha = createHash('sha256').update(bytes).digest('hex');
    expect(img.imageUrl).toMatch(new RegExp(`/api/attachments/images/att_[A-Za-z0-9_-]{16,80}\\.webp#sha256=0x${sha}$`));
    expect(r.stderr).not.toMatch(/16:9 is preferred/);
    const served = Buffer.from(await (await fetch(img.imageUrl)).arrayBuffer());
    expect(served.equals(bytes)).toBe(true);
  });

  it('hints (without refusing) at 16:9 for other ratios', async () => {
    const file = path.join(home.dir, 'square.png');
    writeFileSync(file, png(1000, 1000));
    const r = await run(['--json', 'upload-image', file]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/1000x1000; 16:9 is preferred/);
  });

  it.each([
    ['a 10 MB + 1 byte file', 'big.png', () => png(16, 9, 10_485_761 - 33), 'image_too_large'],
    ['a GIF renamed .png', 'gif.png', () => Buffer.from('GIF89a' + 'x'.repeat(40), 'latin1'), 'image_unsupported'],
    ['an empty file', 'empty.png', () => Buffer.alloc(0), 'image_empty'],
    ['a missing file', 'missing.png', null, 'image_not_found'],
    ['a directory', 'dir.png', 'dir', 'image_not_a_file'],
  ])('refuses %s before any network call, exit 2', async (_n, name, make, code) => {
    const file = path.join(home.dir, `bad-${name}`);
    if (make === 'dir') mkdirSync(file);
    else if (make) writeFileSync(file, (make as () => Buffer)());
    // A dead service: a network attempt would be exit 3.
    const r = await run(['--json', '--base-url', 'http://127.0.0.1:9', 'upload-image', file]);
    expect(r.code).toBe(2);
    expect(r.json().error.code).toBe(code);
  });

  it('a failed file does not stop the others, and the exit code reflects the failure', async () => {
    const good = path.join(home.dir, 'good.png');
    writeFileSync(good, png(1600, 900, 80));
    const r = await run(['--json', 'upload-image', path.join(home.dir, 'nope.png'), good]);
    expect(r.code).toBe(2);
    const results = r.json().error.results;
    expect(results[0]).toMatchObject({ ok: false });
    expect(results[1]).toMatchObject({ ok: true });
    expect(results[1].imageUrl).toMatch(/#sha256=0x/);
  });

  it.each(UPLOAD_HOSTILE)('a hostile upload message (%s) is refused with exit 5', async (scenario) => {
    const file = path.join(home.dir, `${scenario}.png`);
    writeFileSync(file, png(1600, 900, 90 + scenario.length));
    await sb.control('/__sandbox/hostile', { scenario, count: 3 });
    const r = await run(['--json', 'upload-image', file]);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(r.code, r.stdout).toBe(5);
    expect(r.json().error.code).toBe('message_refused');
    capture.count('hostile scenarios refused with exit 5', scenario);
  });
});

describe('images in asks', () => {
  it('an uploaded URL works in an ask, and a local path (question.imageFiles) is uploaded first', async () => {
    const file = path.join(home.dir, 'for-ask.png');
    writeFileSync(file, png(1600, 900, 120));
    const up = await run(['--json', 'upload-image', file]);
    const url = up.json().images[0].imageUrl;
    const ask = (extra: Record<string, unknown>, id: string) =>
      home.file(`${id}.json`, JSON.stringify({
        chainId: 31337, clientRequestId: id, maxPaymentAmount: '1000000', bounty: { amount: '1000000', asset: 'USDC', requiredVoters: '3' },
        question: { title: `Which layout? ${id}`, categoryId: '1', tags: ['design'], ...extra },
      }));
    const a = await run(['--json', 'ask', '--file', ask({ imageUrls: [url] }, `img-url-${Date.now()}`), '--payment-mode', 'wallet_calls']);
    expect(a.code, a.stderr).toBe(0);
    mkdirSync(path.join(home.dir, 'shots'), { recursive: true });
    writeFileSync(path.join(home.dir, 'shots', 'screen.png'), png(1600, 900, 150));
    const id = `img-file-${Date.now()}`;
    const f = ask({ imageFiles: ['shots/screen.png'] }, id);
    const b = await run(['--json', 'ask', '--file', f, '--payment-mode', 'wallet_calls']);
    expect(b.code, b.stderr).toBe(0);
    expect(b.json().contentIds).toHaveLength(1);
    const again = await run(['--json', 'ask', '--file', f, '--payment-mode', 'wallet_calls']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.json().operationKey).toBe(b.json().operationKey);
  });
});

describe('handoff and signing links', () => {
  const askFile = () =>
    home.file(`link-${Date.now()}.json`, JSON.stringify({
      chainId: 31337, clientRequestId: `link-${Date.now()}`, maxPaymentAmount: '1000000', bounty: { amount: '1000000', asset: 'USDC', requiredVoters: '3' },
      question: { title: 'Handoff question', contextUrl: 'https://example.com/h', categoryId: '1', tags: ['h'] },
    }));

  it('creates a handoff with a generated image; the token is only in the URL fragment and the journal; status reads it', async () => {
    const img = path.join(home.dir, 'gen.png');
    writeFileSync(img, png(1600, 900, 200));
    const r = await run(['--json', 'handoff', '--file', askFile(), '--image', img]);
    expect(r.code, r.stderr).toBe(0);
    const doc = r.json();
    const url = new URL(doc.handoffUrl);
    expect(url.pathname).toBe(`/agent/handoff/${doc.handoffId}`);
    expect(url.search).toBe('');
    const token = new URLSearchParams(url.hash.slice(1)).get('token')!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(r.stdout.split(token).length - 1).toBe(1); // once, inside the URL
    expect(r.stderr).not.toContain(token);
    expect(doc.assets).toHaveLength(1);
    const s = await run(['--json', 'handoff', 'status', doc.handoffId]);
    expect(s.code, s.stderr).toBe(0);
    expect(s.json()).toMatchObject({ handoffId: doc.handoffId, status: 'pending', service: { id: doc.handoffId } });
    expect(s.stdout).not.toContain(token);
  });

  it('an expired handoff gets a clear message', async () => {
    const r = await run(['--json', 'handoff', '--file', askFile(), '--ttl', '1m']);
    expect(r.code).toBe(0);
    await sb.control('/__sandbox/time', { advanceSeconds: 120 });
    const s = await run(['--json', 'handoff', 'status', r.json().handoffId]);
    expect(s.code).toBe(3);
    expect(s.json().error).toMatchObject({ code: 'link_expired' });
    expect(s.json().error.hint).toMatch(/loopsign handoff --file/);
  });

  it('creates a signing link /agent/sign/{id}#token=… and reads its status; it expires too', async () => {
    const r = await run(['--json', 'sign-link', '--file', askFile(), '--ttl', '1m']);
    expect(r.code, r.stderr).toBe(0);
    const url = new URL(r.json().signingUrl);
    expect(url.pathname).toBe(`/agent/sign/${r.json().intentId}`);
    expect(url.hash).toMatch(/^#token=/);
    const s = await run(['--json', 'sign-link', 'status', r.json().intentId]);
    expect(s.json().status).toBe('pending');
    await sb.control('/__sandbox/time', { advanceSeconds: 120 });
    const e = await run(['--json', 'sign-link', 'status', r.json().intentId]);
    expect(e.code).toBe(3);
    expect(e.json().error.code).toBe('link_expired');
  });

  it('a TTL outside the allowed range is clamped with a warning', async () => {
    const r = await run(['--json', 'handoff', '--file', askFile(), '--ttl', '2h']);
    expect(r.code).toBe(0);
    expect(r.json().effectiveTtlMs).toBe(1_800_000);
    expect(r.stderr).toMatch(/requested_ttl_clamped/);
  });

  it('these tests cover every upload and link scenario the sandbox offers', async () => {
    const offered = (await sb.control('/__sandbox/hostile')).scenarios.filter((s: { flow: string }) => ['upload', 'handoff'].includes(s.flow)).map((s: { name: string }) => s.name);
    expect(offered.sort()).toEqual([...UPLOAD_HOSTILE, ...LINK_HOSTILE.map((l) => l[0])].sort());
  });

  it.each(LINK_HOSTILE)('a hostile link (%s) is refused with exit 5; its token is neither printed nor kept', async (scenario, command, code) => {
    const journals = () => (existsSync(path.join(home.dir, 'state')) ? filesUnder(path.join(home.dir, 'state')).filter((f) => /handoff|signing-intent/.test(f)) : []);
    const before = journals().length;
    await sb.control('/__sandbox/hostile', { scenario, count: 1 });
    const r = await run(['--json', command, '--file', askFile()]);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(r.code, r.stdout).toBe(5);
    expect(r.json().error.code).toBe(code);
    expect(r.stdout + r.stderr).not.toMatch(/token=/);
    expect(journals()).toHaveLength(before);
    capture.count('hostile scenarios refused with exit 5', scenario);
  });
});
