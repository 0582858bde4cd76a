// The MCP client's own reading of an answer (issue 23): the streamed image upload's JSON-RPC reply is parsed here, not
// by the SDK, so whatever the body is — null, an array, a result that is not an object, a structuredContent that is an
// array — it is read as a document or as absent, never dereferenced (exit 1) and never handed on as something else.
// In process, against a real HTTP server on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoopsignError } from '../src/errors.js';
import { McpClient } from '../src/service/mcp.js';
import { answerServer, type AnswerServer } from './helpers/answer-server.js';

let server: AnswerServer;
let base: string;

beforeAll(async () => {
  server = await answerServer();
  base = server.base;
});
afterAll(() => server.close());

async function upload(reply: string): Promise<unknown> {
  server.answer = reply;
  const mcp = new McpClient(base);
  try {
    return await mcp.callWithBase64('rateloop_upload_image', { attachmentId: 'att_x' }, 'imageBase64', new Uint8Array([1, 2, 3]));
  } catch (error) {
    if (error instanceof LoopsignError) return { code: error.code, exit: error.exitCode };
    return { code: `exception: ${(error as Error).message}`, exit: 1 };
  } finally {
    await mcp.close();
  }
}

describe('the streamed upload reply', () => {
  it('a result is its structuredContent', async () => {
    expect(await upload(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { structuredContent: { status: 'approved' } } }))).toEqual({
      status: 'approved',
    });
  });

  it.each([
    ['null', 'null'],
    ['an array', '[1,2]'],
    ['a number', '7'],
    ['not JSON', 'not json'],
    ['a result that is a string', JSON.stringify({ result: 'x' })],
    ['a result that is null', JSON.stringify({ result: null })],
    ['structuredContent that is an array', JSON.stringify({ result: { structuredContent: [{ status: 'approved' }] } })],
    ['structuredContent that is a string', JSON.stringify({ result: { structuredContent: 'approved' } })],
  ])('%s: an empty document (the upload then fails its own checks)', async (_what, reply) => {
    expect(await upload(reply)).toEqual({});
  });

  it.each([
    ['an error object', JSON.stringify({ error: { code: -32000, message: 'boom' } }), /boom/],
    ['an error that is a string', JSON.stringify({ error: 'boom' }), /boom/],
    ['an error that is an array', JSON.stringify({ error: ['boom'] }), /boom/],
  ])('%s: the call failed (mcp_error, exit 3), saying what the service said', async (_what, reply, said) => {
    server.answer = reply;
    const mcp = new McpClient(base);
    const e = await mcp.callWithBase64('rateloop_upload_image', {}, 'imageBase64', new Uint8Array([1])).catch((x: unknown) => x);
    await mcp.close();
    expect(e).toMatchObject({ code: 'mcp_error', exitCode: 3 });
    expect((e as Error).message).toMatch(said);
  });

  it.each([
    ['a service word', { code: 'image_too_large', message: 'too large' }, 'service.image_too_large'],
    ['no code', { message: 'no' }, 'tool_error'],
    ['a code that is an array', { code: ['x'] }, 'tool_error'],
  ])('a tool error with %s: refused with that code or tool_error (exit 3)', async (_what, content, code) => {
    expect(await upload(JSON.stringify({ result: { isError: true, structuredContent: content } }))).toEqual({ code, exit: 3 });
  });
});
