// A real HTTP server on loopback that answers every request with the JSON the test sets next: the service's side of
// an in-process boundary test (what loopsign does with a lying answer), without the sandbox.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AnswerServer {
  base: string;
  /** The body of the next answers (JSON.stringify'd; a string is sent as it is). */
  answer: unknown;
  /** Each request's method and path, in order. */
  requests: string[];
  close(): Promise<void>;
}

export async function answerServer(): Promise<AnswerServer> {
  const state = { answer: {} as unknown, requests: [] as string[] };
  const server = createServer((req, res) => {
    state.requests.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(typeof state.answer === 'string' ? state.answer : JSON.stringify(state.answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get answer() {
      return state.answer;
    },
    set answer(value: unknown) {
      state.answer = value;
    },
    requests: state.requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
