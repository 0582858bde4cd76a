// Images, handoffs and signing links with the built binary against a sandbox: PNG, JPEG and WEBP uploads approved,
// re-encoded to WebP by the sandbox as the live service does (the URL carries the stored WebP's hash; loopsign
// reports and journals both hashes) and usable in an ask; bad files refused before any network call; a file the
// service fails reported with its reason; hostile upload messages and image URLs refused; links created, read,
// expired, kept to their origin and to the spec's lifetimes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import sharp from 'sharp';
import { readVector, runCli, type Home } from './helpers/cli.js';
import type { SandboxHandle } from './helpers/sandbox.js';
import { openSession } from './helpers/chain.js';
import { capture } from './helpers/capture.js';
import { recordedOfKind, storeFile } from './helpers/store.js';
import Database from 'better-sqlite3';

let sb: SandboxHandle;
let home: Home;
const run = (args: string[], env: Record<string, string> = {}) => runCli(args, home, { env: { ...sb.env(), ...env } });
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

// Real, decodable images (the sandbox decodes and re-encodes every upload). Each call gets its own colour, so no
// two files share bytes (loopsign reuses an earlier upload of the same bytes).
let shade = 0;
function image(format: 'png' | 'jpeg' | 'webp', width: number, height: number): Promise<Buffer> {
  shade += 1;
  const background = { r: shade % 256, g: (shade >> 8) % 256, b: 200 };
  return sharp({ create: { width, height, channels: 3, background } })
    [format]()
    .toBuffer();
}
const png = (width: number, height: number) => image('png', width, height);

/** The image cache journals loopsign wrote in this home (one per uploaded file). */
function imageJournals(): Record<string, unknown>[] {
  return existsSync(storeFile(home)) ? recordedOfKind(home, 'image').map((o) => o.data) : [];
}

beforeAll(async () => {
  ({ sb, home } = await openSession());
});
afterAll(async () => {
  await sb.stop();
});

const UPLOAD_HOSTILE = ['upload_wrong_wallet', 'upload_wrong_payload_hash', 'upload_wrong_action', 'upload_far_expiry'];
const URL_HOSTILE: [string, string][] = [
  ['upload_url_foreign_origin', 'image_url_foreign_origin'],
  ['upload_url_other_attachment', 'image_url_wrong_attachment'],
  ['upload_url_bad_form', 'image_url_malformed'],
];
const LINK_HOSTILE: [string, string, string][] = [
  ['handoff_foreign_origin', 'handoff', 'foreign_link_origin'],
  ['handoff_token_in_query', 'handoff', 'link_token_in_query'],
  ['signing_link_foreign_origin', 'sign-link', 'foreign_link_origin'],
  ['handoff_long_ttl', 'handoff', 'link_lifetime_refused'],
  ['signing_link_long_ttl', 'sign-link', 'link_lifetime_refused'],
];

describe('upload-image', () => {
  it.each([
    ['shot.png', () => image('png', 1600, 900), 1600, 900],
    ['photo.jpg', () => image('jpeg', 1920, 1080), 1920, 1080],
    ['art.webp', () => image('webp', 1280, 720), 1280, 720],
  ] as const)(
    "%s is approved; its URL carries the stored WebP's hash, and loopsign reports and journals both hashes",
    async (name, make, width, height) => {
      const bytes = await make();
      const file = path.join(home.dir, name);
      writeFileSync(file, bytes);
      const r = await run(['--json', 'upload-image', file]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const img = r.json().images[0];
      expect(img.sha256).toBe(sha(bytes));
      expect(img.imageUrl).toBe(`${sb.info.baseUrl}/api/attachments/images/${img.attachmentId}.webp#sha256=0x${img.storedSha256}`);
      expect(img.storedSha256).not.toBe(img.sha256);
      expect({ width: img.width, height: img.height }).toEqual({ width, height });
      expect(r.stderr).not.toMatch(/16:9 is preferred/);
      const served = Buffer.from(await (await fetch(img.imageUrl)).arrayBuffer());
      expect(served.toString('latin1', 8, 12)).toBe('WEBP');
      expect(sha(served)).toBe(img.storedSha256);
      expect(imageJournals().find((j) => j.attachmentId === img.attachmentId)).toMatchObject({
        sha256: img.sha256,
        storedSha256: img.storedSha256,
        imageUrl: img.imageUrl,
        origin: sb.info.baseUrl,
      });
    },
  );

  it('the corpus JPEG with EXIF orientation 6 is stored upright, as the same WebP bytes the live service stored', async () => {
    const c = readVector('live/images.json').cases.find((x: { id: string }) => x.id === 'jpeg-exif-orientation-6');
    const file = path.join(home.dir, c.input.filename);
    writeFileSync(file, Buffer.from(c.input.base64, 'base64'));
    const r = await run(['--json', 'upload-image', file]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const img = r.json().images[0];
    expect({ sha256: img.sha256, storedSha256: img.storedSha256, width: img.width, height: img.height }).toEqual({
      sha256: c.input.sha256,
      storedSha256: c.stored.sha256,
      width: 60,
      height: 80,
    });
    expect(`sha256=0x${img.storedSha256}`).toBe(c.fragment);
  });

  it("a file the service cannot decode is reported with the service's reason (exit 3), and nothing is journaled", async () => {
    const file = path.join(home.dir, 'truncated.png');
    writeFileSync(file, (await png(1600, 900)).subarray(0, 60));
    const before = imageJournals().length;
    const r = await run(['--json', 'upload-image', file]);
    expect(r.code, r.stdout).toBe(3);
    expect(r.json().error).toMatchObject({ code: 'image_rejected' });
    expect(r.json().error.message).toMatch(/not approved \(failed: Image file is corrupt or incomplete/);
    expect(imageJournals()).toHaveLength(before);
  });

  it('hints (without refusing) at 16:9 for other ratios', async () => {
    const file = path.join(home.dir, 'square.png');
    writeFileSync(file, await png(1000, 1000));
    const r = await run(['--json', 'upload-image', file]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/1000x1000; 16:9 is preferred/);
  });

  it.each([
    [
      'a 10 MB + 1 byte file',
      'big.png',
      () => Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(10_485_761 - 8, 7)]),
      'image_too_large',
    ],
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
    writeFileSync(good, await png(1600, 900));
    const r = await run(['--json', 'upload-image', path.join(home.dir, 'nope.png'), good]);
    expect(r.code).toBe(2);
    const results = r.json().error.results;
    expect(results[0]).toMatchObject({ ok: false });
    expect(results[1]).toMatchObject({ ok: true });
    expect(results[1].imageUrl).toMatch(/#sha256=0x/);
  });

  it.each(UPLOAD_HOSTILE)('a hostile upload message (%s) is refused with exit 5', async (scenario) => {
    const file = path.join(home.dir, `${scenario}.png`);
    writeFileSync(file, await png(1600, 900));
    await sb.control('/__sandbox/hostile', { scenario, count: 3 });
    const r = await run(['--json', 'upload-image', file]);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(r.code, r.stdout).toBe(5);
    expect(r.json().error.code).toBe('message_refused');
    capture.count('hostile scenarios refused with exit 5', scenario);
  });

  it.each(URL_HOSTILE)('a hostile image URL (%s) is refused with exit 5, neither printed nor journaled', async (scenario, code) => {
    const file = path.join(home.dir, `${scenario}.png`);
    writeFileSync(file, await png(1600, 900));
    const before = imageJournals().length;
    await sb.control('/__sandbox/hostile', { scenario, count: 1 });
    const r = await run(['--json', 'upload-image', file]);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(r.code, r.stdout).toBe(5);
    expect(r.json().error.code).toBe(code);
    expect(r.stdout).not.toMatch(/api\/attachments\/images/);
    expect(imageJournals()).toHaveLength(before);
    capture.count('hostile scenarios refused with exit 5', scenario);
  });
});

describe('images in asks', () => {
  it('an uploaded URL works in an ask, and a local path (question.imageFiles) is uploaded first', async () => {
    const file = path.join(home.dir, 'for-ask.png');
    writeFileSync(file, await png(1600, 900));
    const up = await run(['--json', 'upload-image', file]);
    const url = up.json().images[0].imageUrl;
    expect(url).toMatch(new RegExp(`#sha256=0x${up.json().images[0].storedSha256}$`));
    const ask = (extra: Record<string, unknown>, id: string) =>
      home.file(
        `${id}.json`,
        JSON.stringify({
          chainId: 31337,
          clientRequestId: id,
          maxPaymentAmount: '1000000',
          bounty: { amount: '1000000', asset: 'USDC', requiredVoters: '3' },
          question: { title: `Which layout? ${id}`, categoryId: '1', tags: ['design'], ...extra },
        }),
      );
    // As live, the service takes an image URL only with the stored image's digest: the file's own hash is refused.
    const fileHash = sha(readFileSync(file));
    const wrong = await run([
      '--json',
      'ask',
      '--file',
      ask({ imageUrls: [url.replace(/0x[0-9a-f]{64}$/, `0x${fileHash}`)] }, `img-wrong-${Date.now()}`),
      '--payment-mode',
      'wallet_calls',
    ]);
    expect(wrong.code, wrong.stdout).toBe(3);
    expect(wrong.stdout).toContain('Uploaded imageUrls must match the approved attachment digest.');
    const a = await run(['--json', 'ask', '--file', ask({ imageUrls: [url] }, `img-url-${Date.now()}`), '--payment-mode', 'wallet_calls']);
    expect(a.code, a.stderr).toBe(0);
    mkdirSync(path.join(home.dir, 'shots'), { recursive: true });
    writeFileSync(path.join(home.dir, 'shots', 'screen.png'), await png(1600, 900));
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
    home.file(
      `link-${Date.now()}.json`,
      JSON.stringify({
        chainId: 31337,
        clientRequestId: `link-${Date.now()}`,
        maxPaymentAmount: '1000000',
        bounty: { amount: '1000000', asset: 'USDC', requiredVoters: '3' },
        question: {
          title: 'Handoff question',
          contextUrl: `https://example.com/h/${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`,
          categoryId: '1',
          tags: ['h'],
        },
      }),
    );

  it('creates a handoff with a generated image; the token is only in the URL fragment and the journal; status reads it', async () => {
    const img = path.join(home.dir, 'gen.png');
    writeFileSync(img, await png(1600, 900));
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

  it.each([
    ['handoff', '2h'],
    ['handoff', '31m'],
    ['handoff', '59s'],
    ['sign-link', '25h'],
    ['sign-link', '59999'],
  ])("%s --ttl %s is outside the spec's bounds: refused before anything is sent (exit 2)", async (command, ttl) => {
    // A dead service: a network attempt would be exit 3.
    const r = await run(['--json', '--base-url', 'http://127.0.0.1:9', command, '--file', askFile(), '--ttl', ttl]);
    expect(r.code, r.stdout).toBe(2);
    expect(r.json().error.code).toBe('invalid_ttl');
    expect(r.json().error.message).toMatch(command === 'handoff' ? /1 minute … 30 minutes/ : /1 minute … 24 hours/);
  });

  it.each([
    ['handoff', '30m', 1_800_000],
    ['sign-link', '24h', 86_400_000],
    ['sign-link', '1m', 60_000],
  ])('%s --ttl %s at the bound is accepted and the link lives exactly that long', async (command, ttl, ms) => {
    const r = await run(['--json', command, '--file', askFile(), '--ttl', ttl]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const id = command === 'handoff' ? r.json().handoffId : r.json().intentId;
    const s = await run(['--json', command, 'status', id]);
    expect(s.code, s.stdout).toBe(0);
    expect(Date.parse(s.json().service.expiresAt) - Date.parse(s.json().service.createdAt)).toBe(ms);
  });

  it.each([['handoff'], ['sign-link']])(
    '%s status sends the token only to the origin that issued it (exit 5, nothing sent)',
    async (command) => {
      const r = await run(['--json', command, '--file', askFile()]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const id = command === 'handoff' ? r.json().handoffId : r.json().intentId;
      const received: string[] = [];
      const trap = createServer((req, res) => {
        received.push(`${req.method} ${req.url} ${JSON.stringify(req.headers)}`);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
      await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
      const other = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`;
      try {
        const s = await run(['--json', '--base-url', other, command, 'status', id]);
        expect(s.code, s.stdout).toBe(5);
        const error = s.json().error;
        expect(error.code).toBe('link_origin_changed');
        expect(error.message).toContain(sb.info.baseUrl);
        expect(error.message).toContain(other);
        expect(error.message).not.toContain('\n');
        expect(received).toEqual([]);
      } finally {
        await new Promise((resolve) => trap.close(resolve));
      }
      // From the origin that issued it, the same link still reads.
      expect((await run(['--json', command, 'status', id])).code).toBe(0);
    },
  );

  it('a journaled link with no recorded origin is not read (exit 5)', async () => {
    const r = await run(['--json', 'sign-link', '--file', askFile()]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const op = recordedOfKind(home, 'signing-intent').find((o) => o.data.intentId === r.json().intentId)!;
    expect(op.data.origin).toBe(sb.info.baseUrl);
    // An older journal kept no origin: edited as it would have been written then.
    const db = new Database(storeFile(home));
    db.prepare("UPDATE operations SET data = json_remove(data, '$.origin') WHERE id = ?").run(op.id);
    db.close();
    const s = await run(['--json', 'sign-link', 'status', r.json().intentId]);
    expect(s.code, s.stdout).toBe(5);
    expect(s.json().error).toMatchObject({ code: 'link_origin_changed' });
    expect(s.json().error.message).toMatch(/no recorded origin/);
  });

  it('these tests cover every upload and link scenario the sandbox offers', async () => {
    const offered = (await sb.control('/__sandbox/hostile')).scenarios
      .filter((s: { flow: string }) => ['upload', 'handoff'].includes(s.flow))
      .map((s: { name: string }) => s.name);
    expect(offered.sort()).toEqual([...UPLOAD_HOSTILE, ...URL_HOSTILE.map((u) => u[0]), ...LINK_HOSTILE.map((l) => l[0])].sort());
  });

  it.each(LINK_HOSTILE)(
    'a hostile link (%s) is refused with exit 5; its token is neither printed nor kept',
    async (scenario, command, code) => {
      const journals = () =>
        existsSync(storeFile(home)) ? [...recordedOfKind(home, 'handoff'), ...recordedOfKind(home, 'signing-intent')] : [];
      const before = journals().length;
      await sb.control('/__sandbox/hostile', { scenario, count: 1 });
      const r = await run(['--json', command, '--file', askFile()]);
      await sb.control('/__sandbox/hostile', undefined, 'DELETE');
      expect(r.code, r.stdout).toBe(5);
      expect(r.json().error.code).toBe(code);
      expect(r.stdout + r.stderr).not.toMatch(/token=/);
      expect(journals()).toHaveLength(before);
      capture.count('hostile scenarios refused with exit 5', scenario);
    },
  );
});
