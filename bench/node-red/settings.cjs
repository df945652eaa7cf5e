// Node-RED settings of the gateway benchmark's comparison (bench/gateway.ts): headless, loopback only.
// The editor and the admin API are off (httpAdminRoot false), and no HTTP-in routes are served; the flow
// file is given on the command line. Its userDir is a temporary folder of the run.
module.exports = {
  uiHost: '127.0.0.1',
  uiPort: Number(process.env.BENCH_NODE_RED_PORT || 0),
  httpAdminRoot: false,
  httpNodeRoot: false,
  credentialSecret: false,
  flowFilePretty: true,
  logging: { console: { level: 'info', metrics: false, audit: false } },
  externalModules: { autoInstall: false, palette: { allowInstall: false } },
  functionExternalModules: false,
  telemetry: { enabled: false },
};
