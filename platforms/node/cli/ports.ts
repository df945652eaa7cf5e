// The ports that fetch and browsers refuse to connect to (the fetch standard's "bad port" list, as Node's
// fetch has it): a service there answers curl, but neither the dashboard nor an agent on Node can reach it.
const BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115,
  117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563,
  587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668,
  6669, 6679, 6697, 10080,
]);

/** Why `port` cannot be used over HTTP from fetch or a browser, or null when it can. */
export function blockedPortProblem(port: number): string | null {
  return BAD_PORTS.has(port) ? `browsers and fetch refuse to connect to port ${port} (one of the fetch standard's "bad ports"): choose another` : null;
}
