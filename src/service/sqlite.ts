// better-sqlite3, loaded when a service opens its store: only the local service needs SQLite, so the
// package is an optional peer dependency, and a project that only runs agents never builds it.
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const PACKAGE = 'better-sqlite3';

/** The better-sqlite3 constructor; throws an error that names the package when it is not installed. */
export function loadSqlite(): typeof BetterSqlite3 {
  try {
    return createRequire(import.meta.url)(PACKAGE) as typeof BetterSqlite3;
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && (e as Error).message.includes(`'${PACKAGE}'`);
    if (!missing) throw e;
    throw new Error(
      `the local service keeps its data in SQLite through the package ${PACKAGE}, which is not installed: ` +
        `npm install ${PACKAGE} (an agent alone never needs it)`,
    );
  }
}
