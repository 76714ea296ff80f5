/**
 * What the commands get from outside (DESIGN §1: time and the cluster are always passed
 * in): the IO, the factory that opens a cluster driver, and the clock. main.ts fills in the
 * real ones; tests pass their own IO and, e.g., the simulator's driver.
 */
import type { ClusterDriver } from '../apply/driver.ts';
import type { FleetRecordStore } from '../fleet/record.ts';
import type { CliIO } from './io.ts';
import type { KubeOptions } from './options.ts';
import type { SignalSource } from './signals.ts';

export interface OpenedDriver {
  driver: ClusterDriver;
  /** Who holds the apply lock (BOOTCPLAN_HOLDER, else user@host). */
  holder: string;
  /** The cluster's record documents, where `fleet apply` keeps its fleet record (a factory for single-cluster commands may leave it out). */
  records?: FleetRecordStore;
  close?: () => void;
}

export type DriverFactory = (flags: KubeOptions, io: CliIO) => Promise<OpenedDriver>;

export interface CliDeps {
  io: CliIO;
  /** Opens the driver of `apply`, `status` and `unlock` (default: the Kubernetes driver). */
  openDriver: DriverFactory;
  /** Epoch milliseconds; `plan` evaluates maintenance windows at this moment. */
  now: () => number;
  /** How the command names itself in help and `version`: bootcplan, or `kubectl bootcplan` as a kubectl plugin. */
  name?: string;
  /** SIGTERM/SIGINT while apply runs (default: the process's; src/cli/signals.ts). */
  signals?: SignalSource;
  /** Exits the process at once (a second signal); default process.exit. */
  exitNow?: (code: number) => void;
}

/** What the actions of a command group share: the dependencies and where the exit code goes. */
export interface CommandContext extends CliDeps {
  setExit: (code: number) => void;
}
