// Raw TCP exchanges with the service, for what an HTTP client library would refuse to send.
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes `data` (pieces are written `gapMs` apart) and collects everything the server sends until it
 * closes the connection or `limitMs` passes. `closed` tells which happened.
 */
export function exchange(
  port: number,
  data: string | Buffer | (string | Buffer)[],
  { limitMs = 3000, gapMs = 0 }: { limitMs?: number; gapMs?: number } = {},
): Promise<{ responses: RawResponse[]; closed: boolean; received: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let closed = false;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const received = Buffer.concat(chunks);
      resolve({ responses: parseResponses(received), closed, received: received.toString('utf8') });
    };
    const timer = setTimeout(finish, limitMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      closed = true;
      finish();
    });
    const pieces = Array.isArray(data) ? data : [data];
    let i = 0;
    const next = () => {
      if (i >= pieces.length || socket.destroyed) return;
      socket.write(pieces[i++]);
      if (i < pieces.length) setTimeout(next, gapMs);
    };
    socket.on('connect', next);
  });
}

/** Splits a byte stream of HTTP/1.1 responses (Content-Length framed; 1xx have no body). */
export function parseResponses(bytes: Buffer): RawResponse[] {
  const out: RawResponse[] = [];
  let rest = bytes;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return out;
    const [statusLine, ...lines] = rest.subarray(0, end).toString('utf8').split('\r\n');
    const status = Number(statusLine.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = status < 200 ? 0 : Number(headers['content-length'] ?? 0);
    out.push({ status, headers, body: rest.subarray(end + 4, end + 4 + length).toString('utf8') });
    rest = rest.subarray(end + 4 + length);
  }
}
