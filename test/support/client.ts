// A plain HTTP client for the tests that speak to the service: one fresh connection per request, the raw
// answer kept.
import { request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: any;
}

export interface RequestOptions {
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
}

export function request(url: string, method: string, options: RequestOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.Authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) {
    headers['Content-Type'] ??= 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(options.body));
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The six operations' paths under one device, for tests that speak to one device. */
export function device(baseUrl: string, publicKey: string, token: string) {
  const root = `${baseUrl}/api/device/${publicKey}`;
  const json = (body: unknown) => ({ body: JSON.stringify(body) });
  return {
    root,
    token,
    getResource: (id: number | string, query = '', opts: RequestOptions = {}) => request(`${root}/resource/${id}${query}`, 'GET', opts),
    getResources: (ids: string, query = '', opts: RequestOptions = {}) => request(`${root}/resources/${ids}${query}`, 'GET', opts),
    createFeed: (id: number | string, input: unknown, query = '', opts: RequestOptions = { token }) =>
      request(`${root}/resource/${id}/feeds${query}`, 'POST', { ...json({ input }), ...opts }),
    createFeeds: (elements: unknown, query = '', opts: RequestOptions = { token }) =>
      request(`${root}/resources/feeds${query}`, 'POST', { ...json(elements), ...opts }),
    firstFeeds: (ids: string, query = '', opts: RequestOptions = {}) => request(`${root}/resources/${ids}/feeds/first${query}`, 'GET', opts),
    lastFeeds: (ids: string, query = '', opts: RequestOptions = {}) => request(`${root}/resources/${ids}/feeds/last${query}`, 'GET', opts),
  };
}
