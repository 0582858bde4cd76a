// What a new user meets first (issue 19), in-process: the question-text rules of the service's parser, refused
// locally, no npx in any document, every exit code in docs/cli.md, and spinners only where a line can be redrawn.
// What the built binary says (usage errors, secrets on argv, refusals before anything is sent, config show, mcp
// config): test/first-contact.cli.test.ts.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { UsageError } from '../src/errors.js';
import { AskFieldError, normalizeAsk } from '../src/protocol/ask-normalize.js';
import { TEMPLATES } from '../src/protocol/templates.js';
import { askBody, refusal } from './helpers/first-contact.js';
import { ROOT, VECTORS } from './helpers/cli.js';

/** The service's own answer attached to a refusal (what the sandbox replies with). */
function serviceAnswer(body: unknown): string | undefined {
  try {
    normalizeAsk(body, { templates: TEMPLATES });
  } catch (error) {
    if (error instanceof AskFieldError) return error.service?.message;
    throw error;
  }
  return undefined;
}

describe('question text: the rules of the service parser, refused locally (exit 2)', () => {
  const h2h = () => JSON.parse(readFileSync(path.join(VECTORS, 'asks', 'ai-model-preference-head-to-head.json'), 'utf8'));

  it('blocked terms in a title or a tag', () => {
    expect(refusal(askBody({}, { title: 'Is this NSFW image fine?' }))?.details).toMatchObject({ field: 'question.title' });
    expect(serviceAnswer(askBody({}, { title: 'Rate my pornography filter' }))).toBe('Your question contains prohibited content');
    expect(refusal(askBody({}, { tags: ['agent', ' Rule34 '] }))?.details).toMatchObject({ field: 'question.tags' });
    expect(serviceAnswer(askBody({}, { tags: 'ok,onlyfans' }))).toBe('Tags contain prohibited content.');
    expect(refusal(askBody({}, { title: 'Should this agent ship the XXL plan?' }))).toBeUndefined();
  });

  it('head-to-head questions: two one-letter options with short labels, a title that names both and asks for a preference', () => {
    expect(refusal(h2h())).toBeUndefined();
    const variant = (f: (b: any) => void) => {
      const b = h2h();
      f(b);
      return b;
    };
    const cases: [string, any, string, string][] = [
      [
        'a title without the option markers',
        variant((b) => (b.question.title = 'Which model do you prefer?')),
        'question.title',
        'Include both option names in the question, e.g. A = OpenAI GPT-5.5 and B = Claude Sonnet 5.',
      ],
      [
        'vote-up-if phrasing',
        variant((b) => (b.question.title = 'Vote up if A = OpenAI GPT-5.5 beats B = Claude Sonnet 5')),
        'question.title',
        'Head-to-head titles should ask which option voters prefer. Avoid vote-up-if phrasing.',
      ],
      [
        'a key that is not one letter',
        variant((b) => (b.question.templateInputs.optionAKey = 'AA')),
        'question.templateInputs',
        'questions[0].templateInputs must include valid optionAKey, optionALabel, optionBKey, and optionBLabel for head_to_head_ab.',
      ],
      [
        'the same key twice',
        variant((b) => (b.question.templateInputs.optionBKey = 'a')),
        'question.templateInputs',
        'questions[0].templateInputs must include valid optionAKey, optionALabel, optionBKey, and optionBLabel for head_to_head_ab.',
      ],
      [
        'a label over 32 characters',
        variant((b) => (b.question.templateInputs.optionALabel = 'x'.repeat(33))),
        'question.templateInputs.optionALabel',
        'questions[0].templateInputs must include valid optionAKey, optionALabel, optionBKey, and optionBLabel for head_to_head_ab.',
      ],
    ];
    for (const [what, body, field, answer] of cases) {
      const r = refusal(body);
      expect(r, what).toBeInstanceOf(UsageError);
      expect(r!.exitCode, what).toBe(2);
      expect(r!.details, what).toMatchObject({ field });
      expect(serviceAnswer(body), what).toBe(answer);
    }
  });
});

describe('conventions', () => {
  it('no document tells a user to run loopsign through npx', () => {
    const docs = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? docs(path.join(dir, e.name)) : e.name.endsWith('.md') ? [path.join(dir, e.name)] : [],
      );
    for (const file of [path.join(ROOT, 'README.md'), ...docs(path.join(ROOT, 'docs'))]) {
      const text = readFileSync(file, 'utf8');
      expect(text, file).not.toMatch(/npx\s+(-y\s+)?loopsign|"command":\s*"npx"|"-y",\s*"loopsign"/);
    }
  });

  it('docs/cli.md lists every exit code and the conventions', async () => {
    const { ExitCode, EXIT_MEANING } = await import('../src/errors.js');
    const cli = readFileSync(path.join(ROOT, 'docs', 'cli.md'), 'utf8');
    for (const code of Object.values(ExitCode)) {
      expect(cli, `exit ${code}`).toMatch(new RegExp(`^\\| ${code} \\|`, 'm'));
      expect(EXIT_MEANING[code], `exit ${code}`).toBeTruthy();
    }
    for (const word of ['LOOPSIGN_API_KEY_FILE', '"apiKeyFile"', 'ETH_RPC_URL', 'sandbox fund', 'display amounts', 'SIGTERM'])
      expect(cli).toContain(word);
  });
});

describe('progress on a terminal', () => {
  it('a spinner only on a TTY that reports a sane width, not under TERM=dumb or CI', async () => {
    const { canSpin } = (await import('../src/output.js')) as { canSpin?: (s: object, env?: NodeJS.ProcessEnv) => boolean };
    expect(typeof canSpin).toBe('function');
    const tty = (columns: number | undefined) => ({ isTTY: true, columns });
    expect(canSpin!(tty(0), {})).toBe(false);
    expect(canSpin!(tty(undefined), {})).toBe(false);
    expect(canSpin!(tty(19), {})).toBe(false);
    expect(canSpin!(tty(80), {})).toBe(true);
    expect(canSpin!(tty(80), { TERM: 'dumb' })).toBe(false);
    expect(canSpin!(tty(80), { CI: 'true' })).toBe(false);
    expect(canSpin!({ isTTY: false, columns: 80 }, {})).toBe(false);
  });

  it('a 0-column TTY gets plain progress lines, one per update', async () => {
    const { Output } = await import('../src/output.js');
    const stderr = Object.assign(new PassThrough(), { isTTY: true, columns: 0 });
    let written = '';
    stderr.on('data', (d: Buffer) => (written += d.toString()));
    const out = new Output({ json: false, quiet: false, debug: false }, { stdout: new PassThrough(), stderr });
    const spinner = await out.spinner('wait', 'waiting');
    for (let i = 0; i < 3; i++) spinner.update(`poll ${i}`);
    spinner.stop();
    expect(written.split('\n').filter(Boolean)).toHaveLength(4);
    expect(written).not.toMatch(/\u001b\[1A/);
  });
});
