/**
 * The ports of the application layer: what the commands get from outside (docs/design.md §1: time and
 * the cluster are always passed in). cli/main.ts fills in the real ones, each an adapter in
 * app/ (io.ts, files.ts, git.ts, live.ts, signals.ts); tests pass their own IO, driver factory,
 * clock and signal source (cli/main.ts CliDeps). Types only.
 */
import type { HealthSource } from '../apply/ports/health.ts';
import type { SilencePort } from '../apply/gates/silences.ts';
import type { ClusterDriver } from '../apply/ports/driver.ts';
import type { ExitCode } from '../base/errors.ts';
import type { FleetRecordStore } from '../fleet/record.ts';
import type { Plan, PhaseDurations } from '../plan/types.ts';
import type { RolloutSpec } from '../rollout-spec/types.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';

/** Output streams (docs/design.md §2): human output on stdout, diagnostics and progress on stderr. */
interface OutputStreams {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  /** Why stdout could not take the output (a full disk), once that is known; run() then exits 1. */
  stdoutFailure?: () => string | null;
}

/** The terminal: which streams are one, how wide, and the one question a command may ask. */
interface Terminal {
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
  /** The terminal's width when stderr is one (progress lines are cut to it). */
  stderrColumns?: number;
  /** Whether a person can answer a prompt; unset: when stdout and stderr are both terminals. */
  stdinIsTTY?: boolean;
  /** Asks one question and returns the answer (the confirmation); unset: a prompt on the process's stdin/stderr. */
  ask?: (question: string) => Promise<string>;
}

/** The environment variables (NO_COLOR, KUBECONFIG, NODE_NAME, BOOTCPLAN_HOLDER ...). */
interface Environment {
  env: Record<string, string | undefined>;
}

/** The process's window as one value: output streams, terminal and environment (app/io.ts processIO). */
export interface CliIO extends OutputStreams, Terminal, Environment {}

/** The live cluster: `--kubeconfig PATH --context NAME`. */
export interface KubeOptions {
  kubeconfig?: string;
  context?: string;
  /** kubectl's format: whole seconds or a duration such as 30s or 1m; 0: no limit. */
  requestTimeout?: string;
  /** A kubeconfig's checked content instead of a path (a file a Fleet names: fleet-kubeconfig.ts; kube/config.ts KubeFlags). */
  kubeconfigText?: { text: string; name: string; dir: string };
}

interface OpenedDriver {
  driver: ClusterDriver;
  /** Who holds the apply lock (BOOTCPLAN_HOLDER, else user@host). */
  holder: string;
  /** The cluster's record documents, where `fleet apply` keeps its fleet record (a factory for single-cluster commands may leave it out). */
  records?: FleetRecordStore;
  close?: () => void;
  /** A source for the plan's health checks against this cluster (docs/apply.md "Health gates"); apply refuses a plan with checks without one. */
  health?: () => HealthSource;
  /** The Alertmanager port for the plan's silences (docs/apply.md "Silences"); apply refuses a plan with silences without one. */
  silences?: () => SilencePort;
}

/** Opens the driver of `apply`, `status` and `unlock` (default: the Kubernetes driver, app/live.ts). */
export type DriverFactory = (flags: KubeOptions, io: CliIO) => Promise<OpenedDriver>;

export type StopSignal = 'SIGINT' | 'SIGTERM';

/** Subscribes to the process's stop signals; returns the unsubscribe (default: app/signals.ts processSignals). */
export type SignalSource = (handler: (signal: StopSignal) => void) => () => void;

/**
 * Stop requests (SIGTERM, SIGINT) while a command runs (app/signals.ts stopRequests, over a
 * SignalSource): `during(run)` runs `run` with an AbortSignal the first request aborts, with a
 * notice on stderr (`notice`, else the safe point's); a second request exits at once.
 */
export interface StopRequests {
  during<T>(run: (signal: AbortSignal) => Promise<T>, notice?: string): Promise<T>;
}

/** Who may read a new output file: `private` (0600: plans, snapshots), `shared` (0644 less the umask: manifests to commit). */
export type OutputAccess = 'private' | 'shared';

/** The file system as the commands use it (default: app/files.ts nodeFiles). */
export interface Files {
  /** A text input: `-` reads stdin; else a regular file of sane size. An InputError naming `what` (with `hint`) otherwise. */
  readText(path: string, what: string, hint?: string): string;
  /** An output file, written whole or not at all; an InputError when it cannot be. */
  write(path: string, content: string, access: OutputAccess): void;
  /** `path` resolved inside `root` (symbolic links followed), or null when it would leave it. */
  inside(root: string, path: string): string | null;
  /** Whether `path` names a directory. */
  isDirectory(path: string): boolean;
}

/** git, run with an argument array (never a shell string) (default: app/git.ts nodeGit). */
export interface Git {
  /** git in `cwd`: its stdout, or null when it fails. */
  run(args: readonly string[], cwd: string): string | null;
  /**
   * A file of the repository at `root` as committed at `commit` (`git show COMMIT:PATH`, a
   * symbolic link read as the link): `abs` must lie inside `root` ("outside"); "missing" when the
   * commit has no such file, "too-big" past `maxBytes` (app/git.ts readRepoFileAt).
   */
  readFileAt(root: string, abs: string, commit: string, maxBytes: number): { text: string; inRepo: string } | { problem: 'outside' | 'missing' | 'too-big' };
}

/** The reads of specs, snapshots and plan files: the files and git ports. */
export interface InputPorts {
  files: Files;
  git: Git;
}

/** A valid spec and its re-planner (app/inputs.ts specFromFile, the fleetClusterSpec port): what an apply plans again with. */
export interface SpecForPlan {
  spec: RolloutSpec;
  replan: (s: ClusterSnapshot) => Plan;
}

/** Everything a command gets from outside. */
export interface Ports extends InputPorts {
  io: CliIO;
  openDriver: DriverFactory;
  /** The clock: epoch milliseconds; `plan` evaluates maintenance windows at this moment. */
  now: () => number;
  /** SIGTERM/SIGINT while apply runs. */
  stops: StopRequests;
  /** The confirmation: one question, the answer (io.ask, else a prompt on the process's terminal: app/io.ts). */
  ask: (question: string) => Promise<string>;
  /** How the command names itself in help and `version`: bootcplan, or `kubectl bootcplan` as a kubectl plugin. */
  name: string;
  /**
   * The spec and re-planner of a saved plan a Fleet made (`plan.spec.fleetCluster`: one cluster's
   * plan out of a fleet plan, applied alone): the Fleet read again and verified by the fleet slice,
   * which cli/main.ts wires in, so the single-cluster commands import nothing of fleets.
   */
  fleetClusterSpec: (plan: Plan, durations: PhaseDurations) => SpecForPlan;
}

/** What a command returns when it ends without an error (errors are thrown: cli/main.ts maps them). */
export interface CommandResult {
  exitCode: ExitCode;
}
