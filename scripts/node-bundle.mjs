// The esbuild options every Node bundle of the project shares: ESM for Node 20, with installed and native
// packages left external, resolved from node_modules at run time.
export const NODE_BUNDLE = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
};
