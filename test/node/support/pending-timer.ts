// Run by host.test.ts in its own process: arms one long timer through the Node host and does nothing
// else. The process must exit on its own: with holdProcess false, a host timer never holds it.
import { createNodeHost } from '../../../platforms/node/host/host';

const host = createNodeHost({ holdProcess: false });
host.setTimer(3_600_000, () => process.stdout.write('fired\n'));
process.stdout.write('armed\n');
