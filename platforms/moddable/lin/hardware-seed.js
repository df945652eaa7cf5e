// firmware/hardware-seed for lin (manifest.json): 32 random bits from the OS (getrandom), for the simulator, in hardware-seed.c.
function hardwareSeed() @ "xs_feedagent_hardware_seed";

export { hardwareSeed };
