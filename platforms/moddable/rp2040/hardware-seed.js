// firmware/hardware-seed for rp2040 (manifest.json): 32 random bits from the Pico SDK's pico_rand (ring-oscillator noise, mixed with the time and the board's id), in hardware-seed.c.
function hardwareSeed() @ "xs_feedagent_hardware_seed";

export { hardwareSeed };
