// The dashboard page's files (docs/dashboard.md): read once when the service is created, served from
// memory. The page's own files sit in `dashboard/` beside this module (src/service/dashboard when run
// from the sources, dist/dashboard once bundled: scripts/build.mjs copies them); uPlot's come from its
// package in node_modules. Nothing is fetched from the network, at build or at run time.
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';

// The page's files other than itself; index.html names them under this prefix.
const ASSET_PREFIX = '/_local/assets/';

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

// What a page may load and run: its own files only. Every value is put into the page as text, never as
// markup; this policy is a second wall should that ever slip.
const HEADERS = {
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

/** The page's files by URL path. Throws, naming the file, when one is missing (a bundle without them). */
export function loadPage(): Map<string, { type: string; body: Buffer }> {
  const own = new URL('dashboard/', import.meta.url);
  const uplot = createRequire(import.meta.url);
  const files: [string, string | URL][] = [
    ['/', new URL('index.html', own)],
    ...['app.js', 'api.js', 'chart.js', 'format.js', 'app.css'].map((name): [string, URL] => [ASSET_PREFIX + name, new URL(name, own)]),
    [ASSET_PREFIX + 'uPlot.iife.min.js', uplot.resolve('uplot/dist/uPlot.iife.min.js')],
    [ASSET_PREFIX + 'uPlot.min.css', uplot.resolve('uplot/dist/uPlot.min.css')],
  ];
  return new Map(
    files.map(([path, file]) => {
      let body: Buffer;
      try {
        body = readFileSync(file);
      } catch (error) {
        throw new Error(`the dashboard's file ${String(file)} cannot be read (npm run build copies them): ${(error as Error).message}`);
      }
      return [path, { type: TYPES[String(file).split('.').pop()!], body }];
    }),
  );
}

export function sendAsset(res: ServerResponse, asset: { type: string; body: Buffer }): void {
  res.writeHead(200, { ...HEADERS, 'Content-Type': asset.type, 'Content-Length': String(asset.body.length) });
  res.end(asset.body);
}
