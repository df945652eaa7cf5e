// A name that stops resolving, with no packet off loopback. The machine's resolver (nsswitch `files dns`)
// sends a name that /etc/hosts lacks to the DNS server of /etc/resolv.conf, off the machine, `.invalid` or
// not; so a test never lets it look a name up. Instead:
// - `LoopbackDns`: a DNS server on 127.0.0.1 (UDP, a free port) that knows one name: A 127.0.0.1 while it
//   resolves, NXDOMAIN while the test says it does not (DNS down for that name); any other name, NXDOMAIN;
// - `lookupVia(server)`: a `lookup` for net.connect that asks that server alone (c-ares, a Resolver whose
//   only server it is; never getaddrinfo), given to the agent as an application would give its own
//   resolver: `createNodeHost({ dispatcher: new Agent({ connect: { lookup } }) })`.
import { createSocket } from 'node:dgram';
import type { Socket } from 'node:dgram';
import { Resolver } from 'node:dns';
import type { LookupFunction } from 'node:net';

const A = 1;
const IN = 1;
const NXDOMAIN = 3;

export interface DnsQuery {
  at: number;
  name: string;
  type: number;
  /** 0: answered (an address for A, none for another type); 3: NXDOMAIN. */
  rcode: number;
}

export class LoopbackDns {
  /** Whether the name resolves (to 127.0.0.1) now. */
  resolvable = true;
  readonly queries: DnsQuery[] = [];

  private constructor(
    private readonly socket: Socket,
    private readonly name: string,
  ) {
    socket.on('message', (query, from) => {
      const answer = this.answer(query);
      if (answer !== null) socket.send(answer, from.port, from.address);
    });
  }

  /** Listens on a free UDP port of 127.0.0.1 for queries about `name`. */
  static async start(name: string): Promise<LoopbackDns> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return new LoopbackDns(socket, name.toLowerCase());
  }

  /** `127.0.0.1:PORT`, for `lookupVia`. */
  get server(): string {
    return '127.0.0.1:' + this.socket.address().port;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }

  /** The answer to one query: its header's id and question, an A record or none, and the code; null for what is not a query. */
  private answer(query: Buffer): Buffer | null {
    if (query.length < 12 || (query[2] & 0x80) !== 0 || query.readUInt16BE(4) !== 1) return null;
    const labels: string[] = [];
    let at = 12;
    for (let length = query[at]; length !== 0; length = query[at]) {
      if (length > 63 || at + 1 + length >= query.length) return null;
      labels.push(query.toString('latin1', at + 1, at + 1 + length));
      at += 1 + length;
    }
    const end = at + 5;
    if (end > query.length) return null;
    const name = labels.join('.').toLowerCase();
    const type = query.readUInt16BE(at + 1);
    const ours = name === this.name && this.resolvable;
    const rcode = ours ? 0 : NXDOMAIN;
    this.queries.push({ at: Date.now(), name, type, rcode });
    const address = ours && type === A ? [0xc0, 0x0c, 0, A, 0, IN, 0, 0, 0, 0, 0, 4, 127, 0, 0, 1] : [];
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    // An answer (QR), the query's opcode and RD, authoritative, recursion available, the code.
    header.writeUInt16BE(0x8000 | (query.readUInt16BE(2) & 0x7900) | 0x0400 | 0x0080 | rcode, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(address.length === 0 ? 0 : 1, 6);
    return Buffer.concat([header, query.subarray(12, end), Buffer.from(address)]);
  }
}

/** A `lookup` (net.connect's, and undici's `connect` option) that asks only the DNS server at `server`, for IPv4 addresses. */
export function lookupVia(server: string): LookupFunction {
  const resolver = new Resolver({ timeout: 1_000, tries: 1 });
  resolver.setServers([server]);
  return (hostname, options, callback) => {
    resolver.resolve4(hostname, (error, addresses) => {
      if (error !== null) return callback(error, '', 4);
      if (options.all === true) return (callback as (e: null, all: { address: string; family: number }[]) => void)(null, addresses.map((address) => ({ address, family: 4 })));
      callback(null, addresses[0], 4);
    });
  };
}
