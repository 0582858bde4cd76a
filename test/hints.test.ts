// Hints speak the caller's language (issue 36 §4): one module renders loopsign's hints, messages and next steps for
// each surface (src/hints.ts). Every error code of the registry is walked through both renderings — its sentence and
// every message and hint src/ gives it (found by scanning the throw sites) — as the MCP server's error document and
// as the CLI prints it: no CLI flag in MCP text (but the server's own arguments, "before `mcp`"), no service tool name
// (`rateloop_…`) in CLI text.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, type CodeEntry } from '../src/error-codes.js';
import { LoopsignError, type ExitCodeValue } from '../src/errors.js';
import { errorDocument } from '../src/mcp/tool-errors.js';
import { Output } from '../src/output.js';
import { renderResult, renderStatus } from '../src/commands/render.js';
import { ROOT } from './helpers/cli.js';

const SRC = path.join(ROOT, 'src');
const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );

/** The string literals of a throw site, `${…}` made into a plain X. */
const literals = (text: string) =>
  [...text.matchAll(/'((?:\\.|[^'\\\n])*)'|"((?:\\.|[^"\\\n])*)"|`((?:\\.|[^`\\])*)`/g)].map((m) =>
    (m[1] ?? m[2] ?? m[3] ?? '').replace(/\$\{(?:[^{}]|\{[^{}]*\})*\}/g, 'X'),
  );

/** Every code's texts: its sentence in the registry, and the literals of each site in src/ that throws it. */
function textsByCode(): Map<string, string[]> {
  const out = new Map<string, string[]>(Object.entries(ERROR_CODES as Record<string, CodeEntry>).map(([c, e]) => [c, [e.says]]));
  const site = /new (?:Usage|Service|Chain|Refused|Credential|NotReady|EvidenceInvalid|Interrupted)Error\(\s*'([a-z_]+)'/g;
  for (const file of files(SRC).filter((f) => !f.includes(`${path.sep}sandbox${path.sep}`))) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(site)) {
      const end = text.indexOf(');\n', m.index);
      const call = text.slice(m.index + m[0].length, end === -1 ? undefined : Math.min(end, m.index + 2000));
      out.get(m[1]!)?.push(...literals(call).filter((l) => l.length > 3));
    }
  }
  return out;
}

const FLAG_IN_MCP = /(?<![\w-])--[a-z][a-z-]*(?![a-z-])(?! before `mcp`)/;
const SERVICE_TOOL = /rateloop_/;

function cliText(error: LoopsignError, json: boolean): string {
  let text = '';
  const sink = { write: (s: string) => ((text += s), true) } as unknown as NodeJS.WritableStream;
  new Output({ json, quiet: false, debug: false }, { stdout: sink, stderr: sink }, {}).error(error);
  return text;
}

describe('every error code, both renderings', () => {
  const texts = textsByCode();
  it.each([...texts.keys()].map((code) => [code]))('%s', (code) => {
    const entry = (ERROR_CODES as Record<string, CodeEntry>)[code]!;
    const all = texts.get(code)!;
    expect(all.length).toBeGreaterThan(0);
    for (const text of all) {
      const error = LoopsignError.again({ code: code as never, exitCode: entry.exit as ExitCodeValue }, text, { hint: text });
      const mcp = errorDocument(error, false).error;
      // The server's own command line stays as the host's configuration holds it.
      const said = `${mcp.message}\n${mcp.hint ?? ''}`.replace(/`loopsign mcp [^`]*`/g, '');
      expect(said, `MCP: ${text}`).not.toMatch(FLAG_IN_MCP);
      for (const json of [false, true]) expect(cliText(error, json), `CLI: ${text}`).not.toMatch(SERVICE_TOOL);
    }
  });
});

describe('the renderings', () => {
  const K = `0x${'ab'.repeat(32)}`;

  it('over MCP: commands with a tool become its call, flags its arguments or the server settings', async () => {
    const { forMcp } = await import('../src/hints.js');
    // The next steps of an ask (src/ask/flow.ts) and the wait timeout's hint.
    expect(forMcp(`loopsign status --operation-key ${K} --wait`)).toBe(`loopsign_status {operationKey: "${K}", wait: true}`);
    expect(forMcp(`loopsign result --operation-key ${K}`)).toBe(`loopsign_result {operationKey: "${K}"}`);
    expect(forMcp(`loopsign confirm --operation-key ${K}`)).toBe(`loopsign_confirm {operationKey: "${K}"}`);
    expect(forMcp(`run \`loopsign status --operation-key ${K} --wait\` later; waiting again is safe`)).toBe(
      `run loopsign_status {operationKey: "${K}", wait: true} later; waiting again is safe`,
    );
    // The messages the issue found.
    expect(forMcp('give --operation-key, or --client-request-id (with the configured chain and wallet)')).toBe(
      'give operationKey, or clientRequestId (with the configured chain and wallet)',
    );
    expect(forMcp('--prediction 0.7 is outside 1 … 99')).toBe('prediction: 0.7 is outside 1 … 99');
    expect(forMcp('verifying a packet needs --public-key (with or without --key-id) or --trusted-keys FILE')).toBe(
      'verifying a packet needs publicKey (with or without keyId) or trustedKeys',
    );
    expect(forMcp('run with --chain-id 8453, or change chainId in the file')).toMatch(
      /^run with LOOPSIGN_CHAIN_ID=8453 in the server's environment .*\(or chainId in the config file\), or change chainId in the file$/,
    );
    // Prose that names loopsign is left alone; a command in backticks without flags is still a tool call.
    expect(forMcp('loopsign asks for your approval: pay 3 USDC')).toBe('loopsign asks for your approval: pay 3 USDC');
    expect(forMcp('loopsign status is pending')).toBe('loopsign status is pending');
    expect(forMcp('see `loopsign templates`')).toBe('see loopsign_templates {}');
    expect(forMcp('re-encrypt it with `loopsign wallet rekey`')).toBe('re-encrypt it with `loopsign wallet rekey`');
    expect(forMcp('next: call_rateloop_get_rating_status')).toBe('next: `loopsign rate status`');
    expect(forMcp('start the server with `loopsign mcp --root DIR`')).toBe('start the server with `loopsign mcp --root DIR`');
    // The service's own tool names become loopsign's tools.
    expect(forMcp('the service suggests: call_rateloop_list_result_templates')).toBe('the service suggests: loopsign_templates {}');
  });

  it("on the command line: the service's tool names become loopsign commands", async () => {
    const { forCli } = await import('../src/hints.js');
    expect(forCli('the service suggests: call_rateloop_list_result_templates')).toBe('the service suggests: loopsign templates');
    expect(forCli('call_rateloop_get_result')).toBe('loopsign result');
    expect(forCli('call_rateloop_do_something_new')).toBe('the service\'s "do something new"');
    expect(renderStatus({ status: 'submitted', operationKey: K, nextAction: 'call_rateloop_get_result' })).toMatch(
      /\n {2}next {10}loopsign result$/,
    );
    expect(renderResult({ answer: 'pending', recommendedNextAction: 'call_rateloop_get_question_status' })).toContain(
      'next          loopsign status',
    );
  });
});
