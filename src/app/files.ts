/**
 * The files port's adapter (nodeFiles). Input files are read only when they are regular files
 * of a sane size; `-` is stdin (./stdin.ts). Output files (`plan --out`, `snapshot --out`) are
 * written so that no one sharing the directory can redirect or corrupt them (docs/safety.md):
 * - the content goes to a temp file with a random name, created exclusively (O_CREAT|O_EXCL:
 *   an existing file or symbolic link at that name is never opened or followed), synced to
 *   disk, then renamed over the target, so readers see the old file or the whole new one;
 * - only a regular file (or a new one) is replaced: a directory, a symbolic link, a device,
 *   pipe or socket is a clean error and stays as it is;
 * - the temp file is removed when anything fails;
 * - a file that is replaced keeps its permission bits, and its owner and group where the process
 *   may set them (root; else a group it belongs to): `--out` onto a 0600 file never leaves a
 *   0644 one. A new file is `private` (0600: plans and snapshots describe the cluster; a
 *   MachineConfig may carry credentials) or `shared` (0644 less the umask: manifests rendered to
 *   be committed). docs/cli.md "Output files".
 */
import {
  openSync,
  writeFileSync,
  fsyncSync,
  closeSync,
  renameSync,
  lstatSync,
  unlinkSync,
  mkdirSync,
  fchmodSync,
  fchownSync,
  readFileSync,
  realpathSync,
  statSync,
  type Stats,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join, basename, relative, resolve, isAbsolute, sep } from 'node:path';
import { InputError, fsErrorText, errnoOf } from '../base/errors.ts';
import type { Files, OutputAccess } from './ports.ts';
import { readStdinText, STDIN_PATH } from './stdin.ts';

/** The files port on the process's file system. */
export const nodeFiles: Files = {
  readText: readTextFile,
  write: (path, content, access) => writeFileAtomic(path, content, access),
  inside: insideRoot,
  isDirectory: (path) => {
    try {
      return statSync(path).isDirectory();
    } catch {
      return false;
    }
  },
};

/**
 * Input files are read only when they are regular files of a sane size: a path that names a
 * device (/dev/zero), a pipe or a socket would otherwise fill memory or block forever.
 */
export const MAX_INPUT_BYTES = 512 * 1024 * 1024;

function readTextFile(path: string, what: string, hint?: string): string {
  if (path === STDIN_PATH) {
    const text = readStdinText(what, MAX_INPUT_BYTES, hint);
    // A closed stdin reads as empty too: say what happened rather than "the file is empty".
    if (!text.trim())
      throw new InputError(`the ${what} on stdin is empty: nothing was piped in`, [], 'pipe it in (`< FILE`, or `cat FILE |`), or name the file instead of -');
    return text;
  }
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new InputError(`${what} ${path} does not exist`, [], hint);
  }
  if (st.isDirectory()) throw new InputError(`${what} ${path} is a directory, not a file`, [], hint);
  if (!st.isFile()) throw new InputError(`${what} ${path} is not a regular file (a device, pipe or socket)`, [], hint);
  if (st.size > MAX_INPUT_BYTES)
    throw new InputError(`${what} ${path} is ${Math.round(st.size / 2 ** 20)} MiB, more than bootcplan reads (${MAX_INPUT_BYTES / 2 ** 20} MiB)`, [], hint);
  try {
    // The bytes, then one decoding: the same string as readFileSync(path, 'utf8'), which on
    // Node.js 20 costs twice the CPU (70 against 37 ms for a 24 MB snapshot; the same on 24).
    return readFileSync(path).toString('utf8');
  } catch (err) {
    throw new InputError(`cannot read ${what} ${path}: ${fsErrorText(err)}`, [], hint);
  }
}

/**
 * `path` resolved inside `root`, or null when it would leave it: absolute elsewhere, through
 * "..", or through a symbolic link (a pull request can add one) that points outside.
 */
export function insideRoot(root: string, path: string): string | null {
  const within = (r: string, p: string) => {
    const rel = relative(r, p);
    return !(rel === '' || rel === '..' || rel.startsWith('..' + sep) || isAbsolute(rel));
  };
  const abs = resolve(root, path);
  if (!within(root, abs)) return null;
  let real: string;
  try {
    real = realpathSync(abs);
  } catch {
    return abs; // does not exist (yet): the read that follows says so
  }
  return within(realpathSync(root), real) ? real : null;
}

/** The rename step, replaceable in tests to make a write fail after the temp file exists. */
interface AtomicWriteSteps {
  rename: (from: string, to: string) => void;
}

const NEW_FILE_MODE: Record<OutputAccess, number> = { private: 0o600, shared: 0o644 };

function existing(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return null;
    throw new InputError(`cannot write ${path}: ${fsErrorText(err)}`);
  }
}

export function writeFileAtomic(path: string, content: string, access: OutputAccess, steps: AtomicWriteSteps = { rename: renameSync }): void {
  const dir = dirname(path) || '.';
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new InputError(`cannot write ${path}: cannot create the directory ${dir} (${fsErrorText(err)})`, [], 'name a file in a directory you can write');
  }
  const st = existing(path);
  if (st?.isDirectory()) throw new InputError(`cannot write ${path}: it is a directory`, [], 'name a file, not a directory');
  if (st?.isSymbolicLink())
    throw new InputError(
      `cannot write ${path}: it is a symbolic link, and bootcplan replaces only regular files`,
      [],
      'name the file the link points to, or remove the link',
    );
  if (st && !st.isFile()) throw new InputError(`cannot write ${path}: it is not a regular file (a device, pipe or socket)`, [], 'name a regular file');

  const tmp = join(dir, `.${basename(path)}.${randomBytes(12).toString('hex')}.tmp`);
  let fd: number | null = null;
  try {
    // A new file: its mode less the umask; a replacement: 0600 until it has the old file's mode.
    fd = openSync(tmp, 'wx', st ? 0o600 : NEW_FILE_MODE[access]);
    writeFileSync(fd, content);
    if (st) keepOwnerAndMode(fd, st);
    fsyncSync(fd);
    closeSync(fd);
    fd = null;
    steps.rename(tmp, path);
  } catch (err) {
    if (fd !== null) closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      // not created, or already renamed
    }
    const denied = ['EACCES', 'EPERM', 'EROFS'].includes(errnoOf(err) ?? '');
    throw new InputError(
      `cannot write ${path}: ${fsErrorText(err)}`,
      [],
      denied ? 'write into a directory you may write to' : 'check the path and the free space',
    );
  }
  syncDirectory(dir);
}

/**
 * The replaced file's owner (first: a change of owner may clear mode bits) and permission bits
 * (exactly, not less the umask: they are the file's).
 */
function keepOwnerAndMode(fd: number, st: Stats): void {
  if (st.uid !== process.getuid?.() || st.gid !== process.getgid?.()) {
    try {
      fchownSync(fd, st.uid, st.gid);
    } catch {
      // not root: the owner stays this user (the group too, unless this user belongs to it)
      try {
        fchownSync(fd, -1, st.gid);
      } catch {
        // not a group of this user
      }
    }
  }
  fchmodSync(fd, st.mode & 0o777);
}

/** The rename is durable only once the directory entry is on disk. */
function syncDirectory(dir: string): void {
  try {
    const d = openSync(dir, 'r');
    try {
      fsyncSync(d);
    } finally {
      closeSync(d);
    }
  } catch {
    // some file systems cannot sync a directory; the file itself is synced
  }
}
