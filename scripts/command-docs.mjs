// npm run docs:commands: one page per command in docs/commands/, generated from the commands' own --help, so the
// documentation cannot drift from the CLI (test/docs.cli.test.ts runs this with --check).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildProgram } from '../build/cli.js';
import { Output } from '../build/output.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, 'docs', 'commands');

function walk(cmd, prefix = []) {
  const out = [];
  for (const sub of cmd.commands) {
    if (sub.name() === 'help') continue;
    const names = [...prefix, sub.name()];
    out.push({ names, cmd: sub });
    out.push(...walk(sub, names));
  }
  return out;
}

function page({ names, cmd }) {
  // Exactly what `loopsign … --help` prints (examples included), at a fixed width.
  const r = spawnSync(process.execPath, [path.join(root, 'bin', 'loopsign.js'), ...names, '--help'], {
    encoding: 'utf8',
    env: { ...process.env, COLUMNS: '100', NO_COLOR: '1' },
  });
  if (r.status !== 0) throw new Error(`loopsign ${names.join(' ')} --help exited ${r.status}`);
  const help = r.stdout.replace(/[ \t]+$/gm, '');
  return `# loopsign ${names.join(' ')}\n\n${cmd.description()}\n\n\`\`\`\n${help.trimEnd()}\n\`\`\`\n\nGlobal options, output contract and exit codes: [../cli.md](../cli.md).\n`;
}

const program = await buildProgram(new Output({ json: false, quiet: true, debug: false }));
const pages = new Map(walk(program).map((c) => [`${c.names.join('-')}.md`, page(c)]));
const index = `# Command reference\n\nGenerated from \`loopsign <command> --help\` by \`npm run docs:commands\`; a test fails when it drifts.\n\n${[...pages.keys()].map((f) => `- [loopsign ${f.replace(/\.md$/, '').replace(/-/g, ' ')}](${f})`).join('\n')}\n`;
pages.set('README.md', index);

if (process.argv.includes('--check')) {
  const stale = [];
  for (const [f, text] of pages) {
    let current = '';
    try {
      current = readFileSync(path.join(dir, f), 'utf8');
    } catch {
      // missing
    }
    if (current !== text) stale.push(f);
  }
  const extra = readdirSync(dir).filter((f) => !pages.has(f));
  if (stale.length || extra.length) {
    console.error(`docs/commands is stale (${[...stale, ...extra].join(', ')}): run npm run docs:commands`);
    process.exit(1);
  }
  console.log(`docs/commands is up to date (${pages.size} pages)`);
} else {
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(dir)) if (!pages.has(f)) throw new Error(`unexpected file docs/commands/${f}`);
  for (const [f, text] of pages) writeFileSync(path.join(dir, f), text);
  console.log(`wrote ${pages.size} pages to docs/commands`);
}
