// docs/ask.md's examples work (issue 36, item 7): every JSON block marked `<!-- sandbox example -->` is quoted and
// dry-run against a sandbox (exit 0: the template, its inputs and the category accepted), and the page names every
// template loopsign knows.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEMPLATES } from '../src/protocol/templates.js';
import { ROOT, runCli, type Home } from './helpers/cli.js';
import type { SandboxHandle } from './helpers/sandbox.js';
import { openSession } from './helpers/chain.js';

const page = readFileSync(path.join(ROOT, 'docs', 'ask.md'), 'utf8');
const examples = [...page.matchAll(/<!-- sandbox example -->\n```json\n([\s\S]*?)```/g)].map((m) => m[1]!);

let sb: SandboxHandle;
let home: Home;
beforeAll(async () => {
  ({ sb, home } = await openSession());
});
afterAll(async () => {
  await sb.stop();
});

describe('docs/ask.md', () => {
  it('names every template and has sandbox examples with templates', () => {
    for (const t of TEMPLATES) expect(page, t.id).toContain(`\`${t.id}\``);
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const e of examples) expect(TEMPLATES.map((t) => t.id)).toContain(JSON.parse(e).question.templateId);
  });

  it('every sandbox example quotes and dry-runs against the sandbox', async () => {
    for (const [i, e] of examples.entries()) {
      const body = JSON.parse(e);
      body.clientRequestId = `${body.clientRequestId}-${process.pid}-${Date.now()}`;
      const file = home.file(`docs-example-${i}.json`, JSON.stringify(body));
      for (const args of [['quote'], ['ask', '--dry-run']]) {
        const r = await runCli(['--json', ...args, '--file', file], home, { env: sb.env() });
        expect(r.code, `${args.join(' ')} of example ${i}: ${r.stdout}${r.stderr}`).toBe(0);
      }
    }
  });
});
