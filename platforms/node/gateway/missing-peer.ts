// The error of a config that needs a protocol library that is not installed. Apart from peers.ts, so that
// the package's declarations never name a peer's types (a consumer need not have them).

/** A package the config needs is not installed. */
export class MissingPeerError extends Error {
  constructor(readonly packages: string[]) {
    super(`this config needs ${packages.join(' and ')}, not installed: npm install ${packages.join(' ')}`);
  }

  override get name(): string {
    return 'MissingPeerError';
  }
}
