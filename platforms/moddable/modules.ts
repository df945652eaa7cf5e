// The SDK's real modules, for createModdableHost (host/) and openFlashQueue (storage/). The only file of the
// adapter that imports them: the others take them as values (host/sdk.ts says why). The manifest must
// include what they need: the http, tls and file manifests and the ECMA-419 HTTP client (manifest.json here).
import HTTPClient from 'embedded:network/http/client';
import { Request } from 'http';
import { Socket } from 'socket';
import SecureSocket from 'securesocket';
import Timer from 'timer';
import Time from 'time';
import { File, Iterator } from 'file';
import type { Sdk } from './host/sdk';
import type { FileSystem } from './storage/file-module';

export const sdk: Sdk = Object.freeze({
  // The SDK's typings are looser than these classes' sources (host/sdk.ts declares what the host uses).
  Request: Request as unknown as Sdk['Request'],
  HTTPClient: HTTPClient as unknown as Sdk['HTTPClient'],
  Socket: Socket as unknown as Sdk['Socket'],
  SecureSocket: SecureSocket as unknown as Sdk['SecureSocket'],
  Timer,
  Time,
  trace,
  // XS takes a byte offset and length (xs/sources/xsString.c); the SDK's typings name only the buffer.
  decode: (bytes: ArrayBuffer, length: number) => (String.fromArrayBuffer as (b: ArrayBuffer, offset: number, length: number) => string)(bytes, 0, length),
  encode: (text: string) => ArrayBuffer.fromString(text),
});

// The SDK's typings name only strings and buffers for File's write; its sources write a number as a byte (storage/file-module.ts).
export const files: FileSystem = Object.freeze({ File: File as unknown as FileSystem['File'], Iterator });
