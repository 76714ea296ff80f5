/**
 * One `bootcplan apply` in a process of its own, for bench/live-scale.ts: runs the CLI's
 * apply against the kubeconfig given, then prints one JSON line with its requests (count,
 * bytes sent, largest object written), wall time and peak RSS.
 *   tsx bench/live-apply-child.ts SPEC KUBECONFIG
 */
import { run } from '../src/cli/main.ts';
import { requestStats } from '../src/kube/request-stats.ts';

const [spec, kubeconfig] = process.argv.slice(2);
let out = '';
let err = '';
const t0 = Date.now();
const code = await run(['apply', '-f', spec, '--kubeconfig', kubeconfig, '--auto-approve', '--json'], {
  io: {
    stdout: (s) => {
      out += s;
      if (process.env.BENCH_VERBOSE) process.stderr.write(s);
    },
    stderr: (s) => void (err += s),
    env: { NO_COLOR: '1' },
    stdoutIsTTY: false,
    stderrIsTTY: false,
  },
});
const wallSeconds = (Date.now() - t0) / 1000;
const events = out
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l));
const stats = requestStats();
console.log(
  JSON.stringify({
    code,
    err: err.slice(0, 2000),
    wallSeconds,
    peakRssMB: process.resourceUsage().maxRSS / 1024,
    waves: events.filter((e) => e.type === 'wave-start').length,
    reboots: events.filter((e) => e.type === 'reboot').length,
    stats,
  }),
);
process.exit(0);
