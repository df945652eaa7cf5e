// Bearer tokens: parsed from the Authorization header and compared in constant time. Only a SHA-256
// digest of each device's token is kept, and both sides are digested before comparing, so neither the
// content nor the length of the token leaks through timing.
import { createHash, timingSafeEqual } from 'node:crypto';

export function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

export function tokenMatches(token: string, digest: Buffer): boolean {
  return timingSafeEqual(tokenDigest(token), digest);
}

const BEARER = /^Bearer +([\x21-\x7e]+) *$/i;

/** The token of an `Authorization: Bearer <token>` header; undefined without the header, null when malformed. */
export function bearerToken(header: string | undefined): string | null | undefined {
  if (header === undefined) return undefined;
  const match = BEARER.exec(header);
  return match === null ? null : match[1];
}
