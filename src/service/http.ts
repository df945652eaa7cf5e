// The HTTP side of every answer: the envelope, the three headers of the interface, failures as
// exceptions, and a body reader that enforces the size limit while the bytes arrive.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

/** A failure to answer with its status and the failure envelope (docs/interface.md, Envelope). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The client went away while its body was being read: there is nobody to answer. */
export class ClientGone extends Error {}

/** The success envelope around an already serialized payload. */
export function successBody(payloadJson: string, message = ''): string {
  return '{"success":true,"payload":' + payloadJson + ',"message":' + JSON.stringify(message) + '}';
}

export function failureBody(message: string): string {
  return JSON.stringify({ success: false, payload: null, message });
}

// After refusing a request whose body is still arriving, keep draining it this long (so the client can
// read the answer instead of a reset), then cut the connection.
const LINGER_MS = 1000;

export function send(req: IncomingMessage, res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const unread = hasBody(req) && !req.readableEnded;
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json',
    'Content-Language': 'en',
    'Content-Length': String(Buffer.byteLength(body)),
    ...(unread ? { Connection: 'close' } : {}),
  });
  res.end(body);
  if (unread) {
    const socket = req.socket;
    req.resume();
    res.once('finish', () => setTimeout(() => socket.destroy(), LINGER_MS).unref());
  }
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Reads the whole body, refusing with 413 as soon as it is known to exceed `maxBytes` (from
 * Content-Length, or while counting the chunks) without keeping more than `maxBytes` of it. A client
 * that waits for 100 Continue is invited only once the declared length is known to fit.
 */
export function readBody(req: IncomingMessage, res: ServerResponse, maxBytes: number): Promise<Buffer> {
  const tooLarge = () => new HttpError(413, `the body is larger than the limit of ${maxBytes} bytes`);
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) return Promise.reject(tooLarge());
  if ((req.headers.expect ?? '').toLowerCase() === '100-continue') res.writeContinue();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        stop();
        reject(tooLarge());
      } else chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks, size));
    };
    const onGone = () => {
      stop();
      reject(new ClientGone());
    };
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onGone);
      req.off('close', onClose);
    };
    const onClose = () => {
      if (!req.complete) onGone();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onGone);
    req.on('close', onClose);
  });
}

const CLIENT_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'the request headers are larger than the limit'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'the request did not arrive in time'],
};

/**
 * Answers a request that never became one (Node's parser refused it, or it timed out), directly on the
 * socket and with the same envelope and headers as every other answer; then closes the connection.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  // A response to an earlier request on this socket may still be under way (Node's own handler looks at
  // the same field). Once it has started there is nothing valid left to say; before, the error answer
  // takes its place and the socket goes at once, so the late response can never follow it.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent: boolean } | null })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true) {
    socket.destroy();
    return;
  }
  const [status, message] = CLIENT_ERRORS[error.code ?? ''] ?? [400, 'the request is not valid HTTP/1.1'];
  const body = failureBody(message);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json\r\nContent-Language: en\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  if (inFlight) socket.destroy();
  else setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
