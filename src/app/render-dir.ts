/**
 * The output directory of `fleet render argocd` (docs/safety.md "fleet render never deletes
 * what it did not write"). bootcplan keeps a record of what it wrote there, `.bootcplan-render`:
 * one line per file, its sha256 and its path. A render
 * - refuses a directory holding any file that is not in the record (a directory without a
 *   record counts as all foreign), and any recorded file whose content changed since: nothing is
 *   written, deleted or moved then;
 * - otherwise writes its files (each atomically, through the files port), removes the recorded
 *   files the new render no longer has and the directories that leaves empty, and writes the
 *   record last.
 * Symbolic links and other non-regular entries are never followed, replaced or removed: they
 * are foreign.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { InputError, errnoOf, messageOf } from '../base/errors.ts';
import type { Diagnostic } from '../base/diagnostics.ts';
import type { RenderedFile } from '../fleet/argocd.ts';
import type { Files } from './ports.ts';

const RENDER_RECORD = '.bootcplan-render';

const sha256 = (content: string | Buffer) => `sha256:${createHash('sha256').update(content).digest('hex')}`;
const LINE = /^(sha256:[0-9a-f]{64}) {2}(.+)$/;
const SHOWN = 8;

/** A relative POSIX path below the directory: no absolute path, no '.', '..' or empty segment. */
function isInside(p: string): boolean {
  return !p.startsWith('/') && !p.includes('\\') && !/[\u0000-\u001f\u007f]/.test(p) && p.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

/** The record as path -> sha256, or null when the directory has none. */
function readRecord(dir: string): Map<string, string> | null {
  const file = join(dir, RENDER_RECORD);
  const st = lstatOrNull(file);
  if (!st) return null;
  if (!st.isFile()) throw new InputError(`--out-dir ${dir}: ${RENDER_RECORD} is not a regular file`, [], 'render into a directory of its own');
  const out = new Map<string, string>();
  const problems: Diagnostic[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line === '' || line.startsWith('#')) return;
      const m = LINE.exec(line);
      if (m && isInside(m[2]) && m[2] !== RENDER_RECORD) out.set(m[2], m[1]);
      else
        problems.push({
          severity: 'error',
          code: 'render-record',
          message: 'expected "sha256:<64 hex>  <relative path>"',
          path: null,
          file,
          line: i + 1,
          column: 1,
        });
    });
  if (problems.length) throw new InputError(`${file} is not a record bootcplan wrote`, problems, `restore it from git, or render into a directory of its own`);
  return out;
}

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return null;
    throw new InputError(`cannot read ${path}: ${errnoOf(err) ?? messageOf(err)}`);
  }
}

/** Every entry below dir that is not a directory, as relative POSIX paths; `regular` says which are regular files. */
function entriesOf(dir: string, rel = '', out: { path: string; regular: boolean }[] = []) {
  for (const name of readdirSync(join(dir, rel)).sort()) {
    const path = rel ? `${rel}/${name}` : name;
    const st = lstatSync(join(dir, path));
    if (st.isDirectory()) entriesOf(dir, path, out);
    else if (path !== RENDER_RECORD) out.push({ path, regular: st.isFile() });
  }
  return out;
}

const listed = (paths: string[]) => paths.slice(0, SHOWN).join(', ') + (paths.length > SHOWN ? `, and ${paths.length - SHOWN} more` : '');

/** Throws, having touched nothing, unless every file in dir is one the record holds, unchanged. */
function checkOwned(dir: string, record: Map<string, string> | null): void {
  const entries = entriesOf(dir);
  const foreign = entries.filter((e) => !e.regular || !record?.has(e.path)).map((e) => e.path);
  if (foreign.length) {
    throw new InputError(
      `--out-dir ${dir} holds files bootcplan did not write: ${listed(foreign)}`,
      [],
      `render into a directory of its own (a new --out-dir); bootcplan replaces only what its record ${RENDER_RECORD} lists, unchanged`,
    );
  }
  const edited = entries.filter((e) => sha256(readFileSync(join(dir, e.path))) !== record?.get(e.path)).map((e) => e.path);
  if (edited.length) {
    throw new InputError(
      `--out-dir ${dir}: ${listed(edited)} ${edited.length === 1 ? 'was' : 'were'} changed since bootcplan wrote ${edited.length === 1 ? 'it' : 'them'}`,
      [],
      `restore ${edited.length === 1 ? 'it' : 'them'} (git checkout -- <file>) and carry the change in the Fleet file or the render's flags instead, then render again`,
    );
  }
}

function recordText(files: readonly RenderedFile[]): string {
  const lines = [...files].sort((a, b) => (a.path < b.path ? -1 : 1)).map((f) => `${sha256(f.content)}  ${f.path}`);
  return (
    '# Written by `bootcplan fleet render argocd`: the files it wrote in this directory and their sha256.\n' +
    '# A later render rewrites or removes only these, and only while unchanged. Commit it with them.\n' +
    lines.join('\n') +
    '\n'
  );
}

/** Writes a render into dir (new, or holding only an unchanged previous render), as the header says. */
export function writeRender(out: Files, dir: string, files: readonly RenderedFile[]): void {
  for (const f of files)
    if (!isInside(f.path) || f.path === RENDER_RECORD) throw new Error(`render file path ${JSON.stringify(f.path)} is not inside the output directory`);
  const st = lstatOrNull(dir);
  if (st && !st.isDirectory()) throw new InputError(`--out-dir ${dir} is not a directory`);
  const record = st ? readRecord(dir) : null;
  if (st) checkOwned(dir, record);
  mkdirSync(dir, { recursive: true });
  for (const f of files) out.write(join(dir, f.path), f.content, 'shared');
  const now = new Set(files.map((f) => f.path));
  for (const old of record?.keys() ?? []) {
    if (now.has(old) || !existsSync(join(dir, old))) continue;
    unlinkSync(join(dir, old));
    removeEmptyParents(dir, old);
  }
  out.write(join(dir, RENDER_RECORD), recordText(files), 'shared');
}

/** Removes the directories between dir and a removed file that are empty now (never dir itself). */
function removeEmptyParents(dir: string, removed: string): void {
  for (let d = dirname(removed); d !== '.' && d !== ''; d = dirname(d)) {
    const abs = join(dir, d);
    if (readdirSync(abs).length) return;
    rmdirSync(abs);
  }
}
