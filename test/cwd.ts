/** Runs `fn` with `dir` as the working directory, as a job run from a checkout would, and returns to where it was. */
export async function inDir<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    return await fn();
  } finally {
    process.chdir(cwd);
  }
}
