// firmware/hardware-seed for esp32 (manifest.json): 32 random bits from ESP-IDF's esp_random (the hardware random number generator), in hardware-seed.c.
function hardwareSeed() @ "xs_feedagent_hardware_seed";

export { hardwareSeed };
