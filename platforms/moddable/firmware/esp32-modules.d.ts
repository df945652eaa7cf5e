// The SDK's ESP32 modules update-esp32.ts uses, as their sources declare them (the published typings
// have neither): build/devices/esp32/modules/ota/ota.js and modules/crypt/digest/crypt.js.
declare module 'ota' {
  export default class OTA {
    constructor();
    write(bytes: ArrayBuffer): void;
    cancel(): void;
    complete(): void;
  }
}

declare module 'crypt' {
  export class Digest {
    constructor(type: 'SHA1' | 'SHA256' | 'SHA512' | 'MD5');
    write(bytes: ArrayBuffer): void;
    close(): ArrayBuffer;
  }
}
