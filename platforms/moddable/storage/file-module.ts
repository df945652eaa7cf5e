// The parts of the Moddable SDK's `file` module the flash queue uses, declared as the SDK's sources
// define them. The flash queue takes the module as a value (`../modules.ts` hands it the real one; tests
// hand it a stand-in over real files), as the host takes the rest of the SDK (../host/sdk.ts says why).
// `../tsconfig.json` checks that the SDK's published typings (@moddable/typings) fit these declarations.

/** An open file of the `file` module (documentation/files/files.md). */
export interface FileHandle {
  read(type: typeof ArrayBuffer, count?: number): ArrayBuffer;
  /**
   * Writes each item at `position`: an ArrayBuffer's bytes, or a number as one byte, its low 8 bits (the
   * sources say so where the documentation names String and ArrayBuffer only: modules/files/file/lin and
   * littlefs/modLittlefs.c, xs_file_write). On lin a call is flushed to the OS before it returns.
   */
  write(...items: (ArrayBuffer | number)[]): void;
  close(): void;
  readonly length: number;
  position: number;
}

export interface FileClass {
  /** Opens `path`; with `write`, creates it when missing (its content is kept). */
  new (path: string, write?: boolean): FileHandle;
  delete(path: string): boolean;
  exists(path: string): boolean;
  /** Absolute paths here; the SDK takes a bare name for `to` as one in `from`'s directory. */
  rename(from: string, to: string): boolean;
}

/** An entry of a directory; `length` is a file's size, undefined for a directory. */
export interface DirectoryEntry {
  name: string;
  length?: number;
}

/** The `file` module's Iterator: the entries of the directory `path`, then undefined (it closes itself). */
export interface DirectoryIteratorClass {
  new (path: string): { next(): DirectoryEntry | undefined };
}

/** What the flash queue needs of the `file` module: its File and Iterator classes. */
export interface FileSystem {
  File: FileClass;
  Iterator: DirectoryIteratorClass;
}
