// The seed of the agent's random source (its start jitter and backoff waits), from the board's own
// entropy: XS never seeds Math.random on a device, so without it every device draws the same waits at
// every boot, and a fleet that lost the network together comes back together. Native on every target;
// manifest.json maps it to ../rp2040/hardware-seed (the Pico SDK's pico_rand), ../esp32/hardware-seed
// (esp_random) or ../lin/hardware-seed (the simulator's OS, getrandom).

/** 32 random bits from the hardware, as an unsigned integer. */
export declare function hardwareSeed(): number;
