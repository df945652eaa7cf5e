// Child of http.test.ts: an application that used Node's fetch before it made a host (Node 20's fetch puts
// its own undici in the global dispatcher), then one request of the host's. Prints the result as JSON.
import { createHttp } from '../../platforms/node/host/http';

const url = process.argv[2];
await fetch(url).catch(() => undefined);
const result = await createHttp()({ method: 'GET', url, headers: {}, timeoutMs: 5_000, maxResponseBytes: 1_000 });
console.log(JSON.stringify(result));
