// A server that speaks HTTP/1.1 by hand on raw sockets, on 127.0.0.1: it reads each request (head and a
// content-length body) and lets the test write any bytes back, so it can say what a well-behaved server never would
// (a 101 nobody asked for, a status of 600, a stalled body, a reset). Closing it destroys every socket it holds.
import { createServer, type Socket } from 'node:net';

export interface RawHttpServer {
  /** http://127.0.0.1:PORT */
  base: string;
  close(): Promise<void>;
}

/** `answer` gets each request's head (request line and headers, latin1) and body (utf8), in order per connection. */
export async function startRawHttpServer(answer: (sock: Socket, head: string, body: string) => void): Promise<RawHttpServer> {
  const sockets = new Set<Socket>();
  const server = createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1');
        const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        const body = buf.subarray(end + 4, end + 4 + length).toString('utf8');
        buf = buf.subarray(end + 4 + length);
        answer(sock, head, body);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
