// The ESP32's app slots (manifest.json maps it to ../esp32/ota-slot, native: ota-slot.c), and what writes
// one. Only the esp32 build has it: two app slots and the bootloader's rollback (docs/firmware.md, "Updates").

/** The running image is on trial: new, not yet confirmed. */
export declare function pendingVerify(): boolean;
/** The running image stays: the bootloader no longer goes back from it. */
export declare function confirm(): void;
/** Marks the running image invalid and restarts into the one before it. */
export declare function rollBack(): never;
/** The running slot's label (ota_0, ota_1). */
export declare function runningSlot(): string;
export declare function restart(): never;
/** The SDK's OTA writer on the next slot (build/devices/esp32/modules/ota): erased as it is written. */
export declare function openOta(): { write(bytes: ArrayBuffer): void; cancel(): void; complete(): void };
/** The SDK's crypt Digest for SHA-256. */
export declare function sha256(): { write(bytes: ArrayBuffer): void; close(): ArrayBuffer };
