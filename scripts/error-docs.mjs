// npm run docs:errors: docs/errors.md, generated from the error-code table (src/error-codes.ts, built to dist/) so the
// documentation cannot drift from the codes loopsign gives. `--check` fails when the file differs;
// test/error-codes.test.ts renders the same page from src/ and compares it.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const cell = (text) => String(text).replace(/\|/g, '\\|');

/** The page, from the table's areas, the service's families and what each exit code means. */
export function renderErrorDocs({ areas, families, exitMeaning }) {
  const entries = Object.values(areas).flatMap((codes) => Object.entries(codes));
  const shared = entries.filter(([, e]) => e.service !== undefined);
  const out = [];
  out.push('# Error codes');
  out.push('');
  out.push('Generated from the table in `src/error-codes.ts` by `npm run docs:errors`; a test fails when this page drifts from it,');
  out.push('and another when loopsign gives a code the table lacks.');
  out.push('');
  out.push(`Every failure is one error document: \`{"ok":false,"error":{"code","message","hint","exitCode",…}}\` on stdout under`);
  out.push('`--json` (docs/cli.md), the same document in an MCP tool error (with `exitMeaning`), or the lines `error:` and `hint:` on');
  out.push('stderr. Act on `error.code`: each code below means one thing and always comes with the exit code given here. The');
  out.push('message says what exactly went wrong; the hint, when there is one, what to run next.');
  out.push('');
  out.push(
    `loopsign's own codes: ${entries.length}. Codes the service chooses come on top of those: see [the last section](#codes-the-service-chooses).`,
  );
  out.push('');
  out.push('## Exit codes');
  out.push('');
  out.push('| Exit | Meaning |');
  out.push('|---|---|');
  for (const [exit, meaning] of Object.entries(exitMeaning)) out.push(`| ${exit} | ${cell(meaning)} |`);
  out.push('');
  for (const [area, codes] of Object.entries(areas)) {
    out.push(`## ${area}`);
    out.push('');
    out.push('| Code | Exit | What happened, and what to do |');
    out.push('|---|---|---|');
    for (const [code, e] of Object.entries(codes))
      out.push(
        `| \`${code}\` | ${e.exit} | ${cell(e.says)}${e.service === undefined ? '' : ' (The service sends this word too: [see below](#words-loopsign-and-the-service-share).)'} |`,
      );
    out.push('');
  }
  out.push('## Codes the service chooses');
  out.push('');
  out.push('When the service refuses a request it names the reason in its own code word (snake_case). loopsign passes that');
  out.push('word on as `error.code`, so an agent can act on what the service said; such codes are not listed one by one above,');
  out.push('because the service decides them. They come in these forms (`details.status` is the HTTP status the service');
  out.push('answered with, when it answered over HTTP):');
  out.push('');
  out.push('| Code | Exit | What happened, and what to do |');
  out.push('|---|---|---|');
  for (const f of families) out.push(`| \`${cell(f.code)}\` | ${f.exit} | ${cell(f.says)} |`);
  out.push('');
  out.push("A word of the service can be one of loopsign's own codes. Where the table says what the service means by it");
  out.push("(below), the word is passed on unchanged and the exit code tells who said it: loopsign's own exit code when");
  out.push('loopsign caught the problem before sending anything, 3 (6 for a credential) when the service refused. Any other');
  out.push("word that is one of loopsign's codes is passed on as `service.<word>`, so that it is never read as loopsign's.");
  out.push('');
  out.push('### Words loopsign and the service share');
  out.push('');
  out.push('| Code | Exit | What the service means by it |');
  out.push('|---|---|---|');
  for (const [code, e] of shared) out.push(`| \`${code}\` | ${e.exit === 6 ? 6 : 3} | ${cell(e.service)} |`);
  out.push('');
  return out.join('\n');
}

async function main() {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const file = path.join(root, 'docs', 'errors.md');
  const { ERROR_AREAS, SERVICE_FAMILIES } = await import(pathToFileURL(path.join(root, 'build', 'error-codes.js')).href);
  const { EXIT_MEANING } = await import(pathToFileURL(path.join(root, 'build', 'errors.js')).href);
  const text = renderErrorDocs({ areas: ERROR_AREAS, families: SERVICE_FAMILIES, exitMeaning: EXIT_MEANING });
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(file, 'utf8');
    } catch {
      // missing
    }
    if (current !== text) {
      console.error('docs/errors.md is stale: run npm run docs:errors');
      process.exit(1);
    }
    console.log('docs/errors.md is up to date');
  } else {
    writeFileSync(file, text);
    console.log('wrote docs/errors.md');
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
