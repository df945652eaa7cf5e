// Who may open the dashboard and its local API (docs/dashboard.md, Security). They are the platform's
// side, so a device's bearer token opens nothing here. Without a password the person at the machine is
// trusted, and only them: the connection must be a loopback one at both ends (a service told 127.0.0.1
// but listening on 0.0.0.0 still refuses the network), and the Host header a loopback name (a web page
// whose own name resolves to 127.0.0.1, DNS rebinding, is refused). With a password, required on any
// address but loopback, it goes through HTTP Basic: the browser asks for it once and sends it with every
// request of the page, polls included.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { tokenDigest, tokenMatches } from './auth';
import { HttpError } from './http';

const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|::1|\[::1\])$/i;

/** Whether a host name or address is this machine's loopback. */
export function isLoopback(host: string): boolean {
  return LOOPBACK.test(host);
}

/** Whether both ends of a connection are loopback addresses, as Node reports them (IPv4 mapped into IPv6 too). */
function isLoopbackConnection(socket: Socket): boolean {
  const loopback = (address: string | undefined) => address !== undefined && isLoopback(address.replace(/^::ffff:(?=\d)/i, ''));
  return loopback(socket.remoteAddress) && loopback(socket.localAddress);
}

/** A password for a dashboard exposed beyond loopback when none was given: 96 random bits. */
export function newPassword(): string {
  return randomBytes(12).toString('base64url');
}

/** The check of every dashboard request; `password` null means loopback connections and Host names only. */
export function accessCheck(password: string | null): (req: IncomingMessage) => void {
  const digest = password === null ? null : tokenDigest(password);
  return (req) => {
    if (digest === null) {
      if (!isLoopbackConnection(req.socket)) throw new HttpError(403, 'without a password the dashboard answers only connections from this machine (a loopback address)');
      if (!isLoopback(hostName(req.headers.host ?? ''))) throw new HttpError(403, 'the dashboard answers only to a loopback host name, such as 127.0.0.1 or localhost');
      return;
    }
    const given = basicPassword(req.headers.authorization);
    if (given === null || !tokenMatches(given, digest)) {
      throw new HttpError(401, 'the dashboard needs its password', { 'WWW-Authenticate': 'Basic realm="feed-agent dashboard", charset="UTF-8"' });
    }
  };
}

/** The host part of a Host header (`127.0.0.1:8080` → `127.0.0.1`, `[::1]:80` → `[::1]`). */
function hostName(header: string): string {
  return header.startsWith('[') ? header.slice(0, header.indexOf(']') + 1) : header.split(':')[0];
}

/** The password of `Authorization: Basic base64(user:password)`; any user name is accepted. */
function basicPassword(header: string | undefined): string | null {
  const match = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header ?? '');
  if (match === null) return null;
  const text = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = text.indexOf(':');
  return colon < 0 ? null : text.slice(colon + 1);
}
