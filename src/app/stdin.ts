/**
 * The one stdin reader (`-f -`, `--cluster -`, `show -`): reads standard input to its end, with
 * the same size limit as input files, and names it `<stdin>` in every position
 * (`<stdin>:12:5`). Synchronous, like the file reads it stands in for; a non-blocking stdin
 * (EAGAIN) is waited on, not busy-looped.
 */
import { readSync } from 'node:fs';
import { InputError, errnoOf, messageOf } from '../base/errors.ts';

/** `-f -`, `--cluster -`, `show -`: the input comes from stdin. */
export const STDIN_PATH = '-';

/** What diagnostics call stdin. */
export const STDIN_NAME = '<stdin>';

/** Where the bytes come from; tests pass their own. */
type ReadChunk = (buf: Buffer) => number;

const fromFd0: ReadChunk = (buf) => readSync(0, buf, 0, buf.length, null);

export function readStdinText(what: string, maxBytes: number, hint?: string, read: ReadChunk = fromFd0): string {
  const chunks: Buffer[] = [];
  let total = 0;
  const buf = Buffer.alloc(1 << 16);
  for (;;) {
    let n: number;
    try {
      n = read(buf);
    } catch (err) {
      const code = errnoOf(err);
      if (code === 'EAGAIN') {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
        continue;
      }
      if (code === 'EOF') break;
      throw new InputError(`cannot read ${what} from stdin: ${code ?? messageOf(err)}`, [], hint);
    }
    if (n === 0) break;
    total += n;
    if (total > maxBytes) throw new InputError(`${what} on stdin is more than bootcplan reads (${maxBytes / 2 ** 20} MiB)`, [], hint);
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return Buffer.concat(chunks).toString('utf8');
}
