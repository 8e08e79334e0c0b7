import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

// Per-process CPU from /proc/<pid>/stat (utime + stime, in clock ticks). A process group (e.g.
// PostgreSQL: the postmaster and every backend) is the root plus its live children, plus the
// root's cutime + cstime, which holds the CPU of children that exited and were reaped.

const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface Stat {
  pid: number;
  ppid: number;
  own: number;
  children: number;
}

function readStat(pid: number): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last ")".
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    // fields[0] is field 3 (state): ppid = field 4, utime 14, stime 15, cutime 16, cstime 17.
    return {
      pid,
      ppid: Number(fields[1]),
      own: Number(fields[11]) + Number(fields[12]),
      children: Number(fields[13]) + Number(fields[14]),
    };
  } catch {
    return undefined;
  }
}

function allPids(): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

/** CPU milliseconds used so far by a process, or by it and all its descendants (`tree`). */
export function cpuMs(pid: number, tree = false): number {
  const root = readStat(pid);
  if (!root) return NaN;
  let ticks = root.own;
  if (tree) {
    // reaped children's time, then every live descendant (nginx's workers are grandchildren of its supervisor)
    ticks += root.children;
    const stats = allPids().flatMap((p) => {
      const s = p === pid ? undefined : readStat(p);
      return s ? [s] : [];
    });
    const inTree = new Set([pid]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const s of stats)
        if (!inTree.has(s.pid) && inTree.has(s.ppid)) {
          inTree.add(s.pid);
          ticks += s.own;
          grew = true;
        }
    }
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** The pid of the process listening on 127.0.0.1/0.0.0.0:<port> (TCP), found through socket inodes. */
export function pidListeningOn(port: number): number | undefined {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set<string>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is "IP:PORT"; st 0A = LISTEN; inode is column 10.
      if (cols.length > 9 && cols[1]!.endsWith(`:${hex}`) && cols[3] === "0A") inodes.add(cols[9]!);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const pid of allPids()) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m && inodes.has(m[1]!)) return pid;
      } catch {
        // the fd closed meanwhile
      }
    }
  }
  return undefined;
}

/** One process (or process tree) whose CPU is sampled. */
export interface Sampled {
  name: string;
  pid: number;
  tree?: boolean;
}

export type CpuSnapshot = Map<string, number>;

export function snapshotCpu(targets: readonly Sampled[]): CpuSnapshot {
  const snap: CpuSnapshot = new Map();
  for (const t of targets) snap.set(t.name, (snap.get(t.name) ?? 0) + cpuMs(t.pid, t.tree));
  return snap;
}

/** CPU ms per process name between two snapshots. */
export function cpuDelta(before: CpuSnapshot, after: CpuSnapshot): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, v] of after) out.set(name, v - (before.get(name) ?? NaN));
  return out;
}

/** The machine's CPU time from /proc/stat (clock ticks): all of it, and what the hypervisor stole. */
export interface MachineTimes {
  total: number;
  steal: number;
  /** idle + iowait: the cores' time nothing ran. */
  idle: number;
}

export function machineTimes(): MachineTimes {
  const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "";
  // cpu user nice system idle iowait irq softirq steal guest guest_nice (guest time is inside user)
  const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
  return { total: ticks.reduce((a, b) => a + b, 0), steal: ticks[7] ?? 0, idle: (ticks[3] ?? 0) + (ticks[4] ?? 0) };
}

/**
 * Share of the machine's time between two readings that anything ran: every process and the
 * kernel's own threads (on some virtual machines a memory monitor, kdamond, takes a core for tens
 * of milliseconds twice a second; docs/performance.md "The submit's tail at half the rate").
 */
export function busyShare(before: MachineTimes, after: MachineTimes): number {
  const total = after.total - before.total;
  return total > 0 ? 1 - (after.idle - before.idle) / total : 0;
}

/**
 * Share of the machine's time between two readings that a virtual machine's hypervisor gave to
 * others (steal): CPU the processes wanted and did not get, which shows up as latency.
 */
export function stealShare(before: MachineTimes, after: MachineTimes): number {
  const total = after.total - before.total;
  return total > 0 ? (after.steal - before.steal) / total : 0;
}
