// Bytes as latin1 text (one character per byte) and back: how the stand-ins carry bytes across JSON.
import { utf8Length, utf8Write } from '../../../src/core/wire/utf8';
export function latin1(buffer: ArrayBuffer): string {
  const bytes = new Uint8Array(buffer);
  let text = '';
  // String.fromCharCode takes its arguments on the stack: a slice at a time.
  for (let i = 0; i < bytes.length; i += 1024) text += String.fromCharCode.apply(null, bytes.subarray(i, i + 1024) as unknown as number[]);
  return text;
}

export function bytesOf(text: string): ArrayBuffer {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes.buffer;
}

/** A string's UTF-8 bytes, as a socket writes a string. */
export function utf8Bytes(text: string): ArrayBuffer {
  const bytes = new Uint8Array(utf8Length(text));
  utf8Write(text, bytes, 0);
  return bytes.buffer;
}
