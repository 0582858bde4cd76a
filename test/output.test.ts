// The output layer's terminal hygiene (issue 11 §7): service text is made inert before loopsign's own colours are
// applied, in results, errors, hints, progress and warnings; URLs registered as sensitive are shown as scheme and
// host only, whatever the mode.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hideUrlInOutput, inert, Output, redactUrl } from '../src/output.js';
import { ServiceError } from '../src/errors.js';

function sink(isTTY: boolean) {
  let text = '';
  return {
    stream: { isTTY, write: (s: string) => ((text += s), true) } as unknown as NodeJS.WritableStream & { isTTY?: boolean },
    text: () => text,
  };
}

const HOSTILE = 'ok\u001b[2K\r\u001b]52;c;ZXZpbA==\u0007\u001b]8;;https://evil.example\u0007link\u001b]8;;\u0007\u202edone\u009b1A';
const SERVICE_ESCAPES = /\u001b\[2K|\r|\u0007|\u202e|\u009b|\u001b\]/;

let saved: Record<string, string | undefined>;
beforeEach(() => {
  saved = { NO_COLOR: process.env.NO_COLOR, TERM: process.env.TERM };
  delete process.env.NO_COLOR;
  process.env.TERM = 'xterm-256color';
});
afterEach(() => {
  for (const [k, v] of Object.entries(saved))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
});

describe('inert text', () => {
  it('shows every control as a visible escape and keeps printable text, tabs and (unless one line) newlines', () => {
    expect(inert('a\u001b[31mb\rc\td\ne\u202ef\u2028g')).toBe('a\\u001b[31mb\\rc\td\ne\\u202ef\\u2028g');
    expect(inert('one\ntwo', true)).toBe('one\\ntwo');
  });
});

describe('Output in human mode on a TTY', () => {
  it('a result: service escapes inert, loopsign colours kept', () => {
    const out = sink(true);
    const o = new Output({ json: false, quiet: false, debug: false }, { stdout: out.stream, stderr: sink(true).stream });
    o.result({}, () => `${HOSTILE} ${o.style('dim', '[flag]')}`);
    expect(out.text()).not.toMatch(SERVICE_ESCAPES);
    expect(out.text()).toContain('\\u001b[2K\\r\\u001b]52;c;ZXZpbA==\\u0007');
    expect(out.text()).toContain('\u001b[2m[flag]\u001b[22m'); // the dim colour loopsign applied itself
  });

  it('errors, hints, progress and warnings: inert and one line each; a forged style placeholder stays text', () => {
    const err = sink(true);
    const o = new Output({ json: false, quiet: false, debug: false }, { stdout: sink(true).stream, stderr: err.stream });
    o.progress('x', `progress ${HOSTILE}\nfake line`);
    o.warn(`warning ${HOSTILE}`);
    o.note(`note ${HOSTILE}`);
    o.error(new ServiceError('bad', `message ${HOSTILE}\nerror: fake second error`, { hint: `hint ${HOSTILE}` }));
    const text = err.text();
    expect(text).not.toMatch(SERVICE_ESCAPES);
    expect(text).toContain('progress ok\\u001b[2K');
    expect(text).toContain('\\nfake line');
    expect(text.split('\n').filter((l) => l.startsWith('error: fake'))).toEqual([]);
    expect(text).toContain('\\nerror: fake second error');
    expect(text).toMatch(/\u001b\[31merror:\u001b\[39m message ok\\u001b\[2K/);
    // A service cannot forge loopsign's colour placeholders: it does not know this process's token.
    const forged = sink(true);
    const p = new Output({ json: false, quiet: false, debug: false }, { stdout: forged.stream, stderr: sink(true).stream });
    p.style('red', 'x');
    p.result({}, () => '\uE000deadbeefdeadbeef.0\uE001');
    expect(forged.text()).toBe('\uE000deadbeefdeadbeef.0\uE001\n');
  });
});

describe('sensitive URLs', () => {
  it('are shown as scheme and host, in human and JSON output, messages and data alike', () => {
    const url = 'https://user:pa55word-secret@rpc.example:8443/v3/abcdef0123456789?key=zzzzzzzzzz';
    hideUrlInOutput(url);
    expect(redactUrl(url)).toBe('https://rpc.example:8443/…');
    expect(redactUrl('https://mainnet.base.org')).toBe('https://mainnet.base.org');
    const human = sink(false);
    new Output({ json: false, quiet: false, debug: true }, { stdout: sink(false).stream, stderr: human.stream }).error(
      new Error(`fetch ${url} failed (path /v3/abcdef0123456789)`),
    );
    const json = sink(false);
    new Output({ json: true, quiet: false, debug: false }, { stdout: json.stream, stderr: sink(false).stream }).result({ rpc: url });
    for (const t of [human.text(), json.text()]) {
      expect(t).not.toMatch(/abcdef0123456789|pa55word-secret|zzzzzzzzzz/);
    }
    expect(JSON.parse(json.text())).toEqual({ ok: true, rpc: 'https://rpc.example:8443/…' });
  });
});
