// The dashboard of the local service (docs/dashboard.md): the page at `/`, its files and the local JSON
// API under /_local/. Every request here passes the access check first; none of it is the interface,
// whose paths all start with /api/device/ and are answered as before.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { accessCheck, isLoopback, newPassword } from './access';
import { LOCAL_API_PREFIX, localApi } from './local-api';
import type { LocalApiDeps } from './local-api';
import { loadPage, sendAsset } from './page';
import { allow } from './routes';

export interface DashboardOptions {
  /**
   * Required from every browser (HTTP Basic, any user name). Default: none on a loopback address; on
   * any other, a random one, which the caller prints.
   */
  password?: string;
}

export interface Dashboard {
  /** The password in force; null: the dashboard answers loopback connections and host names only. */
  password: string | null;
  /** Whether a request URL is the dashboard's. */
  owns(url: string): boolean;
  /** The JSON body of a local API answer, or null when the answer (a file of the page) was sent. */
  answer(req: IncomingMessage, res: ServerResponse): Promise<string | null>;
}

export function createDashboard(options: DashboardOptions, host: string, deps: LocalApiDeps): Dashboard {
  if (options.password === '') throw new RangeError('the dashboard password must not be empty');
  const password = options.password ?? (isLoopback(host) ? null : newPassword());
  const check = accessCheck(password);
  const page = loadPage();
  const api = localApi(deps);
  const pathOf = (url: string) => url.split('?')[0];
  return {
    password,
    owns: (url) => {
      const path = pathOf(url);
      return path === '/' || path.startsWith(LOCAL_API_PREFIX);
    },
    answer: async (req, res) => {
      check(req);
      const url = req.url ?? '/';
      const path = pathOf(url);
      const asset = page.get(path);
      if (asset === undefined) return api(req, res, path, new URLSearchParams(url.slice(path.length + 1)));
      allow(req.method ?? '', 'GET');
      sendAsset(res, asset);
      return null;
    },
  };
}
