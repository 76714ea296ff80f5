/** The git port's adapter: git run as a child process, with an argument array (never a shell string). */
import { execFileSync } from 'node:child_process';
import type { Git } from './ports.ts';

/** git with an argument array (never a shell string); null when git fails. */
export function git(args: readonly string[], cwd: string): string | null {
  try {
    return execFileSync('git', [...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  } catch {
    return null;
  }
}

export const nodeGit: Git = { run: git };
