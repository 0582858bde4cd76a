// Peak memory of uploading a 10 MB image: peak RSS of `loopsign upload-image` for a 10 MB file against the same
// command for a tiny file, in copies of the image (target: about three at most).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BIN, startSandbox } from './lib.mjs';

function png(size) {
  const b = Buffer.alloc(size, 7);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(1600, 16);
  b.writeUInt32BE(900, 20);
  for (let i = 24; i < size; i += 4096) b[i] = i & 0xff; // not all one byte
  return b;
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
    const env = { ...process.env, XDG_STATE_HOME: path.join(home, 'state'), LOOPSIGN_CHAIN_ID: '31337', LOOPSIGN_SANDBOX_MANIFEST: info.manifest, LOOPSIGN_KEYSTORE: info.devWallet.keystore, LOOPSIGN_PASSWORD_FILE: info.devWallet.passwordFile };
    const size = 10_485_760;
    const small = [];
    const big = [];
    for (let i = 0; i < runs; i++) {
      const s = path.join(home, `small-${i}.png`);
      const b = path.join(home, `big-${i}.png`);
      writeFileSync(s, png(1024 + i));
      writeFileSync(b, png(size - i));
      small.push(peakKb(env, s));
      big.push(peakKb(env, b));
    }
    const med = (xs) => [...xs].sort((a, c) => a - c)[Math.floor(xs.length / 2)];
    const extraMb = (med(big) - med(small)) / 1024;
    const copies = (extraMb * 1024 * 1024) / size;
    return [
      { name: 'upload-image: peak RSS, tiny image (baseline)', ms: 0, value: `${(med(small) / 1024).toFixed(1)} MB`, note: '' },
      { name: 'upload-image: peak RSS, 10 MB image', ms: 0, value: `${(med(big) / 1024).toFixed(1)} MB`, note: `+${extraMb.toFixed(1)} MB = ${copies.toFixed(2)} copies of the image (target ≤ ~3) ${copies <= 3.2 ? 'met' : 'MISSED'}` },
    ];
  } finally {
    await sb.stop();
    rmSync(home, { recursive: true, force: true });
  }
}
