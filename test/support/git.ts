/**
 * git in a repository a test made for itself (a spec or a Fleet committed, a plan made at that
 * commit), as a fixed author so that a machine without a git identity can commit. Returns git's
 * output without its final newline.
 */
import { execFileSync } from 'node:child_process';

const AUTHOR = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

/** `git ARGS` in `cwd`. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...AUTHOR } }).trim();
}

/** git bound to one repository: `gitIn(repo)('add', '.')`. */
export function gitIn(repo: string): (...args: string[]) => string {
  return (...args) => git(repo, ...args);
}
