// How many tools/call rounds an MCP client needs from the natural first guess to a valid ask (issue 36, "Done
// when"), measured against the built `loopsign mcp` over stdio, the official SDK client, and a sandbox that prices the
// ask. The client is mechanical: it knows only what tools/list says (the ask's schema and its first example) and what
// each answer says. After each refused call it fixes every problem named: with the value a "did you mean …?" or an
// "e.g. …" in the message gives, else with the schema's example value at that path. The count is printed and held:
// 2 (the guess, then the fixed ask). The schema names the server's configured chain (31337 here), so the example's
// chainId is the right one; before, the example said 8453 and the fixed ask met chain_mismatch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHome } from './helpers/cli.js';
import { startMcp, type McpSession } from './helpers/mcp.js';
import { openSession, type Session } from './helpers/chain.js';

const GUESS = { question: 'Is this landing page clear to a first-time visitor?', bounty: '1.5 USDC' };

let s: Session;
let m: McpSession | undefined;

beforeAll(async () => {
  s = await openSession();
});
afterAll(async () => {
  if (m && m.child.exitCode === null) await m.stop().catch(() => undefined);
  await s?.sb.stop();
});

type Obj = Record<string, any>;
const pathOf = (field: string) =>
  field
    .split(/\.|\[(\d+)\]/)
    .filter((k) => k !== undefined && k !== '')
    .map((k) => (/^\d+$/.test(k) ? Number(k) : k));
const get = (o: unknown, path: (string | number)[]) => path.reduce<any>((n, k) => (n === undefined || n === null ? undefined : n[k]), o);
function set(o: Obj, path: (string | number)[], value: unknown): void {
  let n = o;
  for (const k of path.slice(0, -1)) {
    if (n[k] === null || typeof n[k] !== 'object') n[k] = typeof k === 'number' ? [] : {};
    n = n[k];
  }
  if (value === undefined) delete n[path.at(-1)!];
  else n[path.at(-1)!] = value;
}
/** The JSON value after `lead` in a message ("did you mean {…}?", "e.g. {…}"), if one parses. */
function suggested(message: string, lead: string): { value: unknown } | undefined {
  const at = message.indexOf(lead);
  if (at < 0) return undefined;
  const rest = message.slice(at + lead.length);
  for (let end = rest.length; end > 0; end--) {
    try {
      return { value: JSON.parse(rest.slice(0, end)) };
    } catch {
      // shorter
    }
  }
  return undefined;
}

describe('from the natural guess to a valid ask, over stdio', () => {
  it('counts the tools/call rounds a client reading only tools/list needs', async () => {
    m = await startMcp(makeHome(), { env: s.sb.env() });
    const tool = (await m.client.listTools()).tools.find((t) => t.name === 'loopsign_quote')!;
    const example = (tool.inputSchema.properties as Obj).ask.examples[0] as Obj;

    let ask: Obj = structuredClone(GUESS);
    const log: string[] = [];
    let rounds = 0;
    let answer: Awaited<ReturnType<McpSession['call']>>;
    for (;;) {
      rounds++;
      answer = await m.call('loopsign_quote', { ask });
      if (!answer.isError || answer.doc.error?.code !== 'invalid_ask' || rounds >= 10) break;
      const problems = answer.doc.error.problems as { field: string; message: string }[];
      log.push(`round ${rounds}: ${problems.map((p) => p.field).join(', ')}`);
      const next: Obj = structuredClone(ask);
      for (const p of problems) {
        const path = pathOf(p.field);
        const fix = /^unknown field/.test(p.message)
          ? { value: undefined }
          : (suggested(p.message, 'did you mean ') ?? suggested(p.message, 'e.g. ') ?? { value: structuredClone(get(example, path)) });
        set(next, path, fix.value);
      }
      ask = next;
    }
    console.log(`natural guess to a priced ask: ${rounds} tools/call rounds\n${log.join('\n')}\nlast ask: ${JSON.stringify(ask)}`);
    expect(answer.isError, JSON.stringify(answer.doc)).toBe(false);
    expect(answer.doc).toMatchObject({ ok: true });
    expect(rounds).toBe(2);

    // A client that writes the ask from the schema itself needs one call: each example (one per shape) is priced.
    const examples = (tool.inputSchema.properties as Obj).ask.examples as Obj[];
    expect(examples.map((e) => e.chainId)).toEqual([31337, 31337]);
    for (const e of examples) {
      const priced = await m.call('loopsign_quote', { ask: e });
      expect(priced.isError, JSON.stringify(priced.doc)).toBe(false);
    }
    expect(await m.stop()).toBe(0);
  });
});
