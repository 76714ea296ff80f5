/** The git port's adapter: git run as a child process, with an argument array (never a shell string). */
import { execFileSync } from 'node:child_process';
import { relative, isAbsolute, sep } from 'node:path';
import type { Git } from './ports.ts';
import { errnoOf } from '../base/errors.ts';

/** git with an argument array (never a shell string); null when git fails. */
function git(args: readonly string[], cwd: string): string | null {
  try {
    return execFileSync('git', [...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  } catch {
    return null;
  }
}

/**
 * A file of the repository at `root` as committed at `commit` (`git show COMMIT:PATH`: never the
 * working tree; a symbolic link is read as the link, never followed). `abs` must lie inside
 * `root` ("outside" otherwise); "missing" when the commit has no such file, "too-big" past
 * `maxBytes`. What a Fleet read at a revision names is read this way (fleet-inputs.ts, fleet-kubeconfig.ts).
 */
function readRepoFileAt(
  root: string,
  abs: string,
  commit: string,
  maxBytes: number,
): { text: string; inRepo: string } | { problem: 'outside' | 'missing' | 'too-big' } {
  const rel = relative(root, abs);
  if (rel === '' || rel === '..' || rel.startsWith('..' + sep) || isAbsolute(rel)) return { problem: 'outside' };
  const inRepo = rel.split(sep).join('/');
  try {
    const text = execFileSync('git', ['show', '--end-of-options', `${commit}:${inRepo}`], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: maxBytes,
    });
    return { text, inRepo };
  } catch (err) {
    return { problem: errnoOf(err) === 'ENOBUFS' ? 'too-big' : 'missing' };
  }
}

export const nodeGit: Git = { run: git, readFileAt: readRepoFileAt };
