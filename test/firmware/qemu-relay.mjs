// One connection of the emulated ESP32 to a service on this machine: QEMU's user network starts this for
// each connection the guest opens to a guestfwd address (`guestfwd=tcp:ADDR:PORT-cmd:node qemu-relay.mjs
// HOSTPORT`), the connection on its standard input and output, and it opens its own to 127.0.0.1:HOSTPORT.
// Each end's close reaches the other, so the device sees a server's close or refusal as a board sees it.
// It writes nothing else: QEMU gives it the guest's connection as its standard error too.
import { connect } from 'node:net';

const service = connect(Number(process.argv[2]), '127.0.0.1');
process.stdin.pipe(service);
service.pipe(process.stdout);
service.on('error', () => process.exit(0));
service.on('close', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
