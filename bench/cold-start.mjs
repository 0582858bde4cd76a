// Cold start of `loopsign --version` and `--help` against `node -e 0`, interleaved in the same run.
import { BIN, medianOfInterleaved } from './lib.mjs';

export async function run({ runs = 21 } = {}) {
  const node = process.execPath;
  const [base, version, help] = medianOfInterleaved([[node, '-e', '0'], [node, BIN, '--version'], [node, BIN, '--help']], runs);
  return [
    { name: 'cold start: node -e 0 (baseline)', ms: base, baseline: base },
    { name: 'cold start: loopsign --version', ms: version, baseline: base, target: 1.5 },
    { name: 'cold start: loopsign --help', ms: help, baseline: base },
  ];
}
