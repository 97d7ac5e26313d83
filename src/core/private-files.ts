// The data directory holds the audit trail, trusted host keys and process command lines: only the
// bot's own user may read it. Directories are created 0700 and SQLite files 0600 (SQLite gives its
// -wal and -shm files the database file's mode), and an existing wider mode is narrowed.
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

function narrow(path: string, mode: number): void {
  const st = statSync(path);
  if ((st.mode & 0o777 & ~mode) !== 0) chmodSync(path, mode);
}

/** mkdir -p with mode 0700 for the last directory; a directory that exists is narrowed to 0700. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  narrow(dir, PRIVATE_DIR_MODE);
}

/** Creates (or narrows) a file as 0600 before a library opens it with its own default mode. */
export function ensurePrivateFile(file: string): string {
  closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
  narrow(file, PRIVATE_FILE_MODE);
  for (const side of ['-wal', '-shm', '-journal']) {
    try {
      narrow(file + side, PRIVATE_FILE_MODE);
    } catch {
      // not there yet: SQLite creates it with the database file's mode
    }
  }
  return file;
}
