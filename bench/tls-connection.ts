// What one TLS connection costs in bytes on the socket: the ESP32's classic Moddable `Request` sends
// `Connection: close` (modules/network/http/http.js), so every request it makes is a new TCP and TLS
// connection. Measured on loopback through the counting proxy: a full TLS 1.2 handshake (SecureSocket's
// protocolVersion 0x303) with ECDHE, against a server that presents a two-certificate chain (leaf and
// intermediate, RSA 2048, as most public services do), then both close_notify alerts. The chain is made
// for the run by openssl and thrown away; its certificates carry only what TLS needs, so real ones (with
// more extensions and transparency proofs) make a handshake larger, never smaller. The client is Node's
// OpenSSL, not the device's mbedTLS: its hello offers more than a device's would.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { CountingProxy } from './counting-proxy';

export interface TlsCost {
  /** Bytes both ways until the client's handshake completes. */
  handshake: number;
  /** Bytes both ways of the two close_notify alerts that end the connection. */
  close: number;
}

export interface Chain {
  /** The root's certificate, which the client trusts. */
  ca: string;
  key: string;
  /** Leaf and intermediate, as the server sends them. */
  cert: string;
}

export interface ChainOptions {
  /** The leaf's IPv4 address (default 127.0.0.1). */
  ip?: string;
  /**
   * Valid from 1 January 1970 to the end of 2049 rather than for a day: for a device whose clock starts at
   * 1970 and is never set (the emulated ESP32 reaches no time server), since TLS checks the dates against it.
   */
  fromEpoch?: boolean;
}

/** A root, an intermediate and a leaf for 127.0.0.1 (or `ip`), RSA 2048, valid for a day (or since 1970). */
export function makeChain(options: ChainOptions = {}): Chain {
  const dir = mkdtempSync(join(tmpdir(), 'feed-agent-bench-tls-'));
  try {
    const file = (name: string) => join(dir, name);
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    // The key identifiers openssl x509 adds by itself; openssl ca adds only what it is given.
    const ids = options.fromEpoch ? 'subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n' : '';
    writeFileSync(file('ca.ext'), 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n' + ids);
    writeFileSync(file('leaf.ext'), 'subjectAltName=IP:' + (options.ip ?? '127.0.0.1') + ',DNS:localhost\nextendedKeyUsage=serverAuth\n' + ids);
    const request = (name: string, subject: string) => openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', name + '.key', '-out', name + '.csr', '-subj', subject);
    const leaf = '/CN=' + (options.ip ?? '127.0.0.1');
    if (options.fromEpoch) {
      // openssl x509 dates a certificate from now; openssl ca takes any start date (a minimal CA of its own).
      writeFileSync(file('ca.cnf'), '[ca]\ndefault_ca = d\n[d]\ndatabase = index.txt\nnew_certs_dir = .\nserial = serial\ndefault_md = sha256\npolicy = p\nunique_subject = no\n[p]\ncommonName = supplied\n');
      writeFileSync(file('index.txt'), '');
      writeFileSync(file('serial'), '01\n');
      const issue = (name: string, subject: string, issuer: string | null, ext: string) => {
        request(name, subject);
        const by = issuer === null ? ['-selfsign', '-keyfile', name + '.key'] : ['-cert', issuer + '.pem', '-keyfile', issuer + '.key'];
        openssl('ca', '-batch', '-notext', '-config', 'ca.cnf', ...by, '-in', name + '.csr', '-out', name + '.pem', '-startdate', '700101000000Z', '-enddate', '491231235959Z', '-extfile', ext);
      };
      issue('root', '/CN=feed-agent bench root', null, 'ca.ext');
      issue('intermediate', '/CN=feed-agent bench intermediate', 'root', 'ca.ext');
      issue('leaf', leaf, 'intermediate', 'leaf.ext');
    } else {
      openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'root.key', '-out', 'root.pem', '-days', '1', '-subj', '/CN=feed-agent bench root');
      const issue = (name: string, subject: string, issuer: string, ext: string) => {
        request(name, subject);
        openssl('x509', '-req', '-in', name + '.csr', '-CA', issuer + '.pem', '-CAkey', issuer + '.key', '-CAcreateserial', '-out', name + '.pem', '-days', '1', '-extfile', ext);
      };
      issue('intermediate', '/CN=feed-agent bench intermediate', 'root', 'ca.ext');
      issue('leaf', leaf, 'intermediate', 'leaf.ext');
    }
    const read = (name: string) => readFileSync(file(name), 'utf8');
    return { ca: read('root.pem'), key: read('leaf.key'), cert: read('leaf.pem') + read('intermediate.pem') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bytes of one TLS 1.2 connection: its handshake, then its close. */
export async function tlsConnectionCost(): Promise<TlsCost> {
  const chain = makeChain();
  const server = createServer({ key: chain.key, cert: chain.cert }, (socket) => {
    socket.on('error', () => {});
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy = await CountingProxy.start((server.address() as AddressInfo).port);
  try {
    const client = connect({ host: '127.0.0.1', port: proxy.port, ca: chain.ca, minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' });
    await new Promise<void>((resolve, reject) => {
      client.once('secureConnect', resolve);
      client.once('error', reject);
    });
    // The last handshake record the client read has passed the proxy: nothing else is in flight.
    const handshake = proxy.bytes;
    const closed = new Promise((resolve) => client.once('close', resolve));
    client.end();
    await closed;
    return { handshake, close: proxy.bytes - handshake };
  } finally {
    await proxy.close();
    await new Promise((resolve) => server.close(resolve));
  }
}
