// The local service's address, for `serve` and for the service that `simulate` starts: --host and --port
// checked before anything listens, and the demo devices, whose tokens the README prints, kept on loopback
// unless asked (--allow-demo-token).
import { isIP } from 'node:net';
import { isLoopback } from '../../../src/service/access';
import { blockedPortProblem } from './ports';
import { integer, UsageError } from './usage';

const DEMO_EXPOSED = (host: string) => `the demo devices' tokens are printed in the README, so on ${host} anyone on the network who reaches this port can write as them`;

/**
 * --host, checked before anything listens: a dotted address that is no IP address (999.1.1.1) would be
 * looked up as a name; the demo devices (`demo`: what else to give) stay on loopback unless allowed, as their
 * tokens are public.
 */
export function listenHost(host: string, demo: { allowed: boolean; instead: string } | null): string {
  if (/^[\d.]+$/.test(host) && isIP(host) === 0) throw new UsageError(`--host must be an IP address of this machine or a host name, not ${JSON.stringify(host)}`);
  if (demo !== null && !demo.allowed && !isLoopback(host)) {
    throw new UsageError(
      `refusing to serve the demo devices off loopback: ${DEMO_EXPOSED(host)}. ` +
        `Give ${demo.instead}, or --allow-demo-token to serve the demo there anyway`,
    );
  }
  return host;
}

/** Starts what listens on `host`; a --host that is no address of this machine is bad input, as any bad option is. */
export async function listening<T>(start: () => Promise<T>, host: string): Promise<T> {
  try {
    return await start();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EADDRNOTAVAIL') {
      throw new UsageError(`--host ${host} is not an address of this machine (${code}): 127.0.0.1 for this machine alone, 0.0.0.0 for every interface`);
    }
    throw e;
  }
}

/** --port: 0 (a free one) to 65535, not one that browsers and fetch refuse. */
export function listenPort(text: string): number {
  const value = integer(text, '--port', 0, 65535);
  const blocked = blockedPortProblem(value);
  if (blocked !== null) throw new UsageError(`--port: ${blocked}`);
  return value;
}

/** A warning on stderr when the demo devices are served off loopback (--allow-demo-token asked for it). */
export function warnIfExposed(command: string, host: string): void {
  if (!isLoopback(host)) console.error(`feed-agent ${command}: warning (--allow-demo-token): ${DEMO_EXPOSED(host)}`);
}
