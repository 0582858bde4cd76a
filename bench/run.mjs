// npm run bench: every benchmark of the project in one table, each with its baseline measured in the same run.
// Figures are printed, never asserted (tests do not assert timings).
const suites = [
  ['cold-start', () => import('./cold-start.mjs')],
  ['keystore', () => import('./keystore.mjs')],
  ['commit', () => import('./commit.mjs')],
  ['evidence', () => import('./evidence.mjs')],
  ['ask', () => import('./ask.mjs')],
  ['upload', () => import('./upload.mjs')],
  ['policy', () => import('./policy.mjs')],
];

const only = process.argv.slice(2).filter((a) => !a.startsWith('--')); // flags go to the suites
const rows = [];
for (const [name, load] of suites) {
  if (only.length && !only.includes(name)) continue;
  process.stderr.write(`running ${name}…\n`);
  rows.push(...(await (await load()).run()));
}

const fmt = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);
const width = Math.max(...rows.map((r) => r.name.length));
console.log(`${'benchmark'.padEnd(width)}  ${'median'.padStart(10)}  ${'ratio'.padStart(7)}  target`);
for (const r of rows) {
  const ratio = r.baseline ? r.ms / r.baseline : undefined;
  const value = r.value ?? fmt(r.ms);
  if (r.value && !r.baseline) {
    console.log(`${r.name.padEnd(width)}  ${value.padStart(10)}  ${''.padStart(7)}  ${r.note ?? ''}`);
    continue;
  }
  const target = r.target ? `≤ ${r.target}x ${ratio <= r.target ? 'met' : 'MISSED'}` : (r.note ?? '');
  console.log(`${r.name.padEnd(width)}  ${value.padStart(10)}  ${ratio ? ratio.toFixed(2) + 'x' : ''.padStart(7)}  ${target}`);
}
