// The SDK's real modules, for createModdableHost and openFlashQueue. The only file of the adapter that
// imports them: the others take them as values (sdk.ts says why). The manifest must include what they
// need: the http, tls and file manifests (platforms/moddable/manifest.json does).
import { Request } from 'http';
import SecureSocket from 'securesocket';
import Timer from 'timer';
import Time from 'time';
import { File } from 'file';
import type { FileClass, Sdk } from './sdk';

export const sdk: Sdk = Object.freeze({ Request, SecureSocket, Timer, Time, trace, decode: (bytes: ArrayBuffer) => String.fromArrayBuffer(bytes) });

export const files: FileClass = File;
