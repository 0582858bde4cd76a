// Cold starts against `node -e 0` (and, for verifying a packet, against node doing the same hashing work), all
// interleaved in the same run: `--version` (≤ 1.2x) and `--help` (≤ 1.25x), both answered by the bin without
// loading the program, and `verify-evidence` of the shared example packet (≤ 1.5x), which loads commander, its
// own command's definition and the offline verifier only.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BIN, ROOT, medianOfInterleaved } from './lib.mjs';

export async function run({ runs = 21 } = {}) {
  const node = process.execPath;
  const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-bench-cold-'));
  const packet = path.join(ROOT, 'test', 'fixtures', 'vectors', 'synthetic-evidence-v4.json');
  const pin = path.join(ROOT, 'test', 'fixtures', 'vectors', 'synthetic-evidence-v4.spki.txt');
  // The baseline for a verification: node reading and parsing the packet and hashing its payload a dozen times.
  const work = path.join(dir, 'work.mjs');
  writeFileSync(
    work,
    `import { createHash } from 'node:crypto'; import { readFileSync } from 'node:fs';
const t = readFileSync(${JSON.stringify(packet)}, 'utf8'); const p = JSON.parse(t);
for (let i = 0; i < 12; i++) createHash('sha256').update(JSON.stringify(p.payload)).digest('hex');`,
  );
  try {
    const [base, version, help, hashing, verify] = medianOfInterleaved(
      [
        [node, '-e', '0'],
        [node, BIN, '--version'],
        [node, BIN, '--help'],
        [node, work],
        [node, BIN, 'verify-evidence', packet, '--public-key', pin, '--key-id', 'ed25519:2d5798c16bafaed29bdbcca0'],
      ],
      runs,
    );
    return [
      { name: 'cold start: node -e 0 (baseline)', ms: base, baseline: base },
      { name: 'cold start: loopsign --version', ms: version, baseline: base, target: 1.2 },
      { name: 'cold start: loopsign --help', ms: help, baseline: base, target: 1.25 },
      { name: 'cold verify: node -e 0 + the hashing work (baseline)', ms: hashing, baseline: hashing },
      { name: 'cold verify: loopsign verify-evidence example packet', ms: verify, baseline: hashing, target: 1.5 },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
