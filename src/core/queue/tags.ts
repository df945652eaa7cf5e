// What a slot of the ring holds beside its number: the tag byte, and a string sample's place in the
// string pool packed into its value. The queue writes them, the body encoder (batch-body.ts)
// reads them as they are.

// A sample's tag byte: bits 0-3 its text entry (NO_ENTRY: none), bits 4-5 its kind, bit 6 set for a
// string that is all ASCII. A number with a text entry has a tag below NO_ENTRY: one comparison in the
// body encoder.
export const ENTRY = 0x0f, NO_ENTRY = 0x0f;
export const KIND_SHIFT = 4;
export const NUMBER = 0, FALSE = 1, TRUE = 2, STRING = 3;
export const STRING_TAG = STRING << KIND_SHIFT;
export const ASCII = 0x40;

// A string sample keeps `length * LENGTH_UNIT + offset` in its value: an offset below 2^32 and a length
// below 2^21 stay exact in a double, and need no array of their own.
export const LENGTH_UNIT = 4294967296;
export const MAX_STRING_BYTES = 2097151;
export const MAX_POOL_BYTES = 4294967295;

/** The length in bytes of a packed string value. */
export function lengthOf(packed: number): number {
  return (packed - (packed % LENGTH_UNIT)) / LENGTH_UNIT;
}

/** The pool offset of a packed string value. */
export function offsetOf(packed: number): number {
  return packed % LENGTH_UNIT;
}
