// Peak memory of uploading a 10 MB image: peak RSS of `loopsign upload-image` for a 10 MB file against the same
// command for a tiny file, in copies of the image (target: about three at most).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { BIN, startSandbox } from './lib.mjs';

// A real PNG of about `size` bytes (the sandbox decodes every upload): random pixels, stored uncompressed.
async function png(size, seed) {
  const width = 1600;
  const height = Math.max(9, Math.floor((size - 32_768) / (width * 3 + 1)));
  const raw = Buffer.alloc(width * height * 3);
  let x = 0x9e3779b9 ^ seed;
  for (let i = 0; i < raw.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5; // xorshift: noise that does not compress
    raw[i] = x & 0xff;
  }
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
}

function peakKb(env, file) {
  const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, BIN, '--json', 'upload-image', file], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`upload failed: ${r.stdout}${r.stderr}`);
  return Number(r.stderr.trim().split('\n').pop());
}

export async function run({ runs = 3 } = {}) {
  const home = mkdtempSync(path.join(tmpdir(), 'loopsign-bench-up-'));
  const sb = await startSandbox(path.join(home, 'sb'));
  const info = sb.info;
  try {
    const env = {
      ...process.env,
      XDG_STATE_HOME: path.join(home, 'state'),
      LOOPSIGN_CHAIN_ID: '31337',
      LOOPSIGN_SANDBOX_MANIFEST: info.manifest,
      LOOPSIGN_KEYSTORE: info.devWallet.keystore,
      LOOPSIGN_PASSWORD_FILE: info.devWallet.passwordFile,
    };
    const size = 10_485_760;
    const small = [];
    const big = [];
    for (let i = 0; i < runs; i++) {
      const s = path.join(home, `small-${i}.png`);
      const b = path.join(home, `big-${i}.png`);
      writeFileSync(s, await png(0, i));
      writeFileSync(b, await png(size, i));
      small.push(peakKb(env, s));
      big.push(peakKb(env, b));
    }
    const med = (xs) => [...xs].sort((a, c) => a - c)[Math.floor(xs.length / 2)];
    const extraMb = (med(big) - med(small)) / 1024;
    const copies = (extraMb * 1024 * 1024) / size;
    return [
      { name: 'upload-image: peak RSS, tiny image (baseline)', ms: 0, value: `${(med(small) / 1024).toFixed(1)} MB`, note: '' },
      {
        name: 'upload-image: peak RSS, 10 MB image',
        ms: 0,
        value: `${(med(big) / 1024).toFixed(1)} MB`,
        note: `+${extraMb.toFixed(1)} MB = ${copies.toFixed(2)} copies of the image (target ≤ ~3) ${copies <= 3.2 ? 'met' : 'MISSED'}`,
      },
    ];
  } finally {
    await sb.stop();
    rmSync(home, { recursive: true, force: true });
  }
}
