import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import {
  accessSync,
  chmodSync,
  chownSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

// scripts/ensure-infra.sh for real (docs/decisions.md, "A fresh machine"): real redis-server,
// nats-server and PostgreSQL on free ports named by the URL variables, never the shared servers on
// 5432/6379/4222. A binary is made missing by leaving it off PATH (a directory of links to
// everything else in /usr/bin) and, for /usr/sbin/nats-server, which the script also looks for
// outside PATH, by an empty file mounted over it in a private mount namespace. Unprivileged runs
// are `nobody` (setpriv), so most cases need root, as on this machine.

const ROOT = path.resolve(import.meta.dirname, "../..");
const SCRIPT = path.join(ROOT, "scripts/ensure-infra.sh");
const NATS_SBIN = "/usr/sbin/nats-server";
/** Servers elsewhere: the script leaves them alone and never contacts them. */
const ELSEWHERE = {
  DATABASE_URL: "postgresql://tog@db.invalid:5432/tog",
  REDIS_URL: "redis://cache.invalid:6379",
  NATS_URL: "nats://bus.invalid:4222",
};
const MISSING_HINT = "or point the *_URL variables at running servers";

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
const find = (name: string): string | undefined =>
  [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/sbin", "/usr/bin", "/bin"]
    .filter(Boolean)
    .map((d) => path.join(d, name))
    .find(executable);
const idOf = (flag: string, user: string): number | undefined => {
  try {
    return Number(execFileSync("id", [flag, user]).toString().trim());
  } catch {
    return undefined;
  }
};

const BASH = find("bash")!;
const SETPRIV = find("setpriv");
const UNSHARE = find("unshare");
const MOUNT = find("mount");
const REDIS = find("redis-server");
const NATS = find("nats-server");
const IS_ROOT = process.getuid?.() === 0;
const NOBODY = { uid: idOf("-u", "nobody"), gid: idOf("-g", "nobody") };
const PG = { uid: idOf("-u", "postgres"), gid: idOf("-g", "postgres") };
const PG_BIN = (() => {
  const versions = existsSync("/usr/lib/postgresql")
    ? readdirSync("/usr/lib/postgresql").sort((a, b) => Number(a) - Number(b))
    : [];
  const bin = versions.length ? `/usr/lib/postgresql/${versions.at(-1)}/bin` : undefined;
  return bin && executable(`${bin}/initdb`) && executable(`${bin}/postgres`) ? bin : undefined;
})();
const PSQL = find("psql");
const CAN_DROP = IS_ROOT && SETPRIV !== undefined && NOBODY.uid !== undefined && NOBODY.gid !== undefined;
/** Whether /usr/sbin/nats-server can be made missing (or is missing already). */
const CAN_HIDE_NATS =
  !existsSync(NATS_SBIN) ||
  (IS_ROOT &&
    UNSHARE !== undefined &&
    MOUNT !== undefined &&
    (() => {
      try {
        execFileSync(UNSHARE, ["--mount", "--propagation", "private", "--", "true"], { stdio: "ignore" });
        return true;
      } catch {
        return false;
      }
    })());

let tmp = "";
let caseNo = 0;
const usedPorts = new Set<number>();

beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "tog-ensure-infra-"));
  chmodSync(tmp, 0o755);
});

afterEach(async () => {
  await stopStrays();
});

afterAll(async () => {
  await stopStrays();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** A fresh directory for one case, with a copy of the script in a repository-shaped tree (the script works from its parent), usable by `nobody`. */
function newCase(): { dir: string; script: string; infraDir: string } {
  const dir = path.join(tmp, `case-${++caseNo}`);
  mkdirSync(path.join(dir, "repo/scripts"), { recursive: true });
  const script = path.join(dir, "repo/scripts/ensure-infra.sh");
  copyFileSync(SCRIPT, script);
  const infraDir = path.join(dir, "infra");
  mkdirSync(infraDir);
  // Its own infra directory is the only place an unprivileged run may write.
  chmodSync(dir, 0o755);
  chmodSync(infraDir, 0o777);
  return { dir, script, infraDir };
}

/** A PATH directory holding everything in /usr/bin except `hidden`. */
function pathWithout(dir: string, hidden: string[]): string {
  const bin = path.join(dir, "bin");
  mkdirSync(bin);
  for (const name of readdirSync("/usr/bin"))
    if (!hidden.includes(name)) symlinkSync(path.join("/usr/bin", name), path.join(bin, name));
  chmodSync(bin, 0o755);
  return bin;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  usedPorts.add(port);
  return port;
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

/** Writes `request` and collects the reply until it matches `until` or the server closes. */
function talk(port: number, request: string, until?: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let reply = "";
    const socket = net.connect(port, "127.0.0.1", () => socket.write(request));
    const timer = setTimeout(
      () => (socket.destroy(), reject(new Error(`no answer on ${port}; got ${JSON.stringify(reply)}`))),
      10_000,
    );
    socket.on("data", (chunk) => {
      reply += chunk.toString();
      if (until?.test(reply)) clearTimeout(timer), socket.destroy(), resolve(reply);
    });
    socket.once("close", () => (clearTimeout(timer), resolve(reply)));
    socket.once("error", (err) => (clearTimeout(timer), reject(err)));
  });
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  lines: string[];
}

/** Runs the script with exactly `env`; as `nobody` when asked; with /usr/sbin/nats-server hidden when asked. */
function runScript(
  script: string,
  env: Record<string, string>,
  opts: { asNobody?: boolean; hideNats?: boolean } = {},
): Promise<Run> {
  let argv = [BASH, script];
  if (opts.asNobody)
    argv = [SETPRIV!, `--reuid=${NOBODY.uid}`, `--regid=${NOBODY.gid}`, "--clear-groups", "--", ...argv];
  if (opts.hideNats && existsSync(NATS_SBIN)) {
    const empty = path.join(tmp, "empty");
    writeFileSync(empty, "", { mode: 0o644 });
    argv = [
      UNSHARE!,
      "--mount",
      "--propagation",
      "private",
      "--",
      "/bin/sh",
      "-c",
      '"$1" --bind "$2" "$3" && shift 3 && exec "$@"',
      "sh",
      MOUNT!,
      empty,
      NATS_SBIN,
      ...argv,
    ];
  }
  return new Promise((resolve) => {
    execFile(argv[0]!, argv.slice(1), { env, timeout: 40_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
      resolve({ code, stdout, stderr, lines: stderr.split("\n").filter(Boolean) });
    });
  });
}

/** Processes left by a case: anything running from the temp dir, and redis-server on one of this file's ports. */
function strays(): number[] {
  const marks = [tmp, ...[...usedPorts].map((p) => `redis-server 127.0.0.1:${p}`)];
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d) && Number(d) !== process.pid)
    .filter((d) => {
      try {
        const cmdline = readFileSync(`/proc/${d}/cmdline`, "utf8").replaceAll("\0", " ").trim();
        return cmdline !== "" && marks.some((m) => cmdline.includes(m));
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function stopStrays(): Promise<void> {
  const pids = strays();
  for (const pid of pids) signal(pid, "SIGTERM");
  for (
    let i = 0;
    i < 50 && pids.some((p) => existsSync(`/proc/${p}/cmdline`) && readFileSync(`/proc/${p}/cmdline`).length > 0);
    i++
  )
    await sleep(100);
  for (const pid of pids) signal(pid, "SIGKILL");
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("ensure-infra.sh", () => {
  it.runIf(REDIS !== undefined && NATS !== undefined)(
    "starts redis-server and nats-server -js on the ports REDIS_URL and NATS_URL name (over TEST_*), data under TOG_INFRA_DIR",
    async () => {
      const { dir, script, infraDir } = newCase();
      const redisPort = await freePort();
      const natsPort = await freePort();
      const otherNatsPort = await freePort();
      // As root, a daemonized redis-server writes /var/run/redis.pid, which the shared one wrote:
      // run as `nobody` where we can, so that file is left alone.
      const run = await runScript(
        script,
        {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: dir,
          TOG_INFRA_DIR: infraDir,
          DATABASE_URL: ELSEWHERE.DATABASE_URL,
          REDIS_URL: `redis://127.0.0.1:${redisPort}`,
          NATS_URL: `nats://127.0.0.1:${natsPort}/`,
          TEST_NATS_URL: `nats://localhost:${otherNatsPort}`,
        },
        { asNobody: CAN_DROP },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.lines).toEqual([
        "[ensure-infra] starting Redis",
        "[ensure-infra] NATS_URL and TEST_NATS_URL name different ports; ensuring the one of NATS_URL",
        "[ensure-infra] starting NATS with JetStream",
        `[ensure-infra] port ${redisPort} answers`,
        `[ensure-infra] port ${natsPort} answers`,
      ]);

      expect(await talk(redisPort, "PING\r\n", /\r\n/)).toBe("+PONG\r\n");
      // A JetStream API request answered: the server runs with -js, not only NATS core.
      const reply = await talk(
        natsPort,
        'CONNECT {"verbose":false}\r\nSUB _INBOX.t 1\r\nPUB $JS.API.INFO _INBOX.t 0\r\n\r\n',
        /MSG _INBOX\.t 1 \d+\r\n.*\r\n/s,
      );
      expect(reply).toContain('"type":"io.nats.jetstream.api.v1.account_info_response"');
      expect(reply).not.toContain('"error"');
      expect(await answers(otherNatsPort)).toBe(false);
      expect(existsSync(path.join(infraDir, "redis/redis.log"))).toBe(true);
      expect(existsSync(path.join(infraDir, "nats/jetstream"))).toBe(true);
      expect(existsSync(path.join(dir, "repo/.tools/infra"))).toBe(false);

      await talk(redisPort, "SHUTDOWN NOSAVE\r\n");
      await stopStrays();
      expect(await answers(redisPort)).toBe(false);
      expect(await answers(natsPort)).toBe(false);
    },
  );

  it.runIf(CAN_DROP && CAN_HIDE_NATS)(
    "as an unprivileged user without redis-server and nats-server: installs nothing, says what to install, exits non-zero",
    async () => {
      const { dir, script, infraDir } = newCase();
      const redisPort = await freePort();
      const natsPort = await freePort();
      // apt-get stays on PATH: only the user's rights keep the script from it.
      const bin = pathWithout(dir, ["redis-server", "nats-server"]);
      const run = await runScript(
        script,
        {
          PATH: bin,
          HOME: dir,
          TOG_INFRA_DIR: infraDir,
          DATABASE_URL: ELSEWHERE.DATABASE_URL,
          REDIS_URL: `redis://127.0.0.1:${redisPort}`,
          NATS_URL: `nats://localhost:${natsPort}`,
        },
        { asNobody: true, hideNats: true },
      );
      expect(run.code).toBe(1);
      // One line per missing server, naming its package; no wait for a server that cannot come.
      expect(run.lines).toEqual([
        `[ensure-infra] missing: redis-server - install them (e.g. sudo apt-get install redis-server) ${MISSING_HINT}`,
        `[ensure-infra] missing: nats-server - install them (e.g. sudo apt-get install nats-server) ${MISSING_HINT}`,
      ]);
      expect(strays()).toEqual([]);
      expect(await answers(redisPort)).toBe(false);
      expect(await answers(natsPort)).toBe(false);
    },
  );

  it.runIf(CAN_DROP)(
    "as an unprivileged user without pg_ctlcluster and nothing on the URL's port: says to install postgresql",
    async () => {
      const { dir, script, infraDir } = newCase();
      const port = await freePort();
      const bin = pathWithout(dir, ["pg_ctlcluster"]);
      const run = await runScript(
        script,
        {
          PATH: bin,
          HOME: dir,
          TOG_INFRA_DIR: infraDir,
          DATABASE_URL: `postgresql://postgres@127.0.0.1:${port}/postgres`,
          TEST_DATABASE_ADMIN_URL: `postgresql://postgres@127.0.0.1:${port}/postgres`,
          REDIS_URL: ELSEWHERE.REDIS_URL,
          NATS_URL: ELSEWHERE.NATS_URL,
        },
        { asNobody: true },
      );
      expect(run.code).toBe(1);
      expect(run.lines).toEqual([
        `[ensure-infra] missing: postgresql postgresql-client - install them (e.g. sudo apt-get install postgresql postgresql-client) ${MISSING_HINT}`,
      ]);
      expect(await answers(port)).toBe(false);
    },
  );

  it.runIf(IS_ROOT && CAN_HIDE_NATS)(
    "as root without the servers: runs apt-get update once, then apt-get install with the distribution's package names, and reports its failure",
    async () => {
      // The packages are installed on this machine, so a real `apt-get install` would prove nothing
      // and change the machine; what is under test is the decision to call it and how: a stub
      // apt-get, first on PATH, records its arguments and fails like an apt-get that cannot install.
      const { dir, script, infraDir } = newCase();
      const [pgPort, redisPort, natsPort] = [await freePort(), await freePort(), await freePort()];
      const bin = pathWithout(dir, ["pg_ctlcluster", "redis-server", "nats-server", "apt-get"]);
      const stubDir = path.join(dir, "stub");
      const record = path.join(dir, "apt-get.calls");
      mkdirSync(stubDir);
      writeFileSync(
        path.join(stubDir, "apt-get"),
        `#!/bin/sh\nprintf '%s|%s\\n' "\${DEBIAN_FRONTEND:-}" "$*" >> '${record}'\necho "E: apt-get stub: nothing is installed in this test" >&2\nexit 1\n`,
        { mode: 0o755 },
      );
      const run = await runScript(
        script,
        {
          PATH: `${stubDir}:${bin}`,
          HOME: dir,
          TOG_INFRA_DIR: infraDir,
          DATABASE_URL: `postgresql://postgres@127.0.0.1:${pgPort}/postgres`,
          REDIS_URL: `redis://127.0.0.1:${redisPort}/0`,
          NATS_URL: `nats://127.0.0.1:${natsPort}`,
        },
        { hideNats: true },
      );
      const lock = "-o DPkg::Lock::Timeout=120";
      const install = `noninteractive|${lock} -y -qq --no-install-recommends install`;
      expect(readFileSync(record, "utf8").split("\n").filter(Boolean)).toEqual([
        `|${lock} -qq update`,
        `${install} postgresql postgresql-client`,
        `${install} redis-server`,
        `${install} nats-server`,
      ]);
      expect(run.code).toBe(1);
      const stub = "E: apt-get stub: nothing is installed in this test";
      expect(run.lines).toEqual([
        "[ensure-infra] installing postgresql postgresql-client with apt-get",
        stub,
        "[ensure-infra] apt-get install postgresql postgresql-client failed",
        "[ensure-infra] installing redis-server with apt-get",
        stub,
        "[ensure-infra] apt-get install redis-server failed",
        "[ensure-infra] installing nats-server with apt-get",
        stub,
        "[ensure-infra] apt-get install nats-server failed",
      ]);
      expect(strays()).toEqual([]);
    },
  );

  describe.runIf(IS_ROOT && PG_BIN !== undefined && PSQL !== undefined && PG.uid !== undefined && PG.gid !== undefined)(
    "PostgreSQL that wants a password on TCP (Debian's default)",
    () => {
      // A private cluster on a free port with Debian's pg_hba.conf (peer on the socket, passwords on
      // TCP). Its socket is in its own directory; PGHOST points the script's `psql` there, as it
      // would for any server whose socket is not in the default place.
      let server: ChildProcess | undefined;
      let port = 0;
      let base = "";
      let socketDir = "";
      let hba = "";
      const asPostgres = (sql: string) =>
        execFileSync(PSQL!, ["-h", socketDir, "-p", String(port), "-U", "postgres", "-d", "postgres", "-Atc", sql], {
          uid: PG.uid,
          gid: PG.gid,
          cwd: base,
        })
          .toString()
          .trim()
          .split("\n");

      beforeAll(async () => {
        base = mkdtempSync(path.join(os.tmpdir(), "tog-ensure-infra-pg-"));
        chmodSync(base, 0o755);
        const data = path.join(base, "data");
        socketDir = path.join(base, "socket");
        for (const d of [data, socketDir]) {
          mkdirSync(d, { mode: 0o700 });
          chownSync(d, PG.uid!, PG.gid!);
        }
        const asPg = { uid: PG.uid, gid: PG.gid, cwd: base, env: { PATH: process.env.PATH ?? "", LANG: "C" } };
        execFileSync(
          `${PG_BIN}/initdb`,
          ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"],
          { ...asPg, stdio: "ignore" },
        );
        hba = "local all all peer\nhost all all 127.0.0.1/32 scram-sha-256\nhost all all ::1/128 scram-sha-256\n";
        writeFileSync(path.join(data, "pg_hba.conf"), hba);
        port = await freePort();
        server = spawn(
          `${PG_BIN}/postgres`,
          ["-D", data, "-p", String(port), "-k", socketDir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"],
          { ...asPg, stdio: "ignore" },
        );
        for (let i = 0; i < 100 && !(await answers(port)); i++) await sleep(100);
        expect(await answers(port)).toBe(true);
      });

      afterAll(async () => {
        if (server && server.exitCode === null) {
          const exited = new Promise((resolve) => server!.once("exit", resolve));
          server.kill("SIGINT");
          await exited;
        }
        if (base) rmSync(base, { recursive: true, force: true });
      });

      it("creates role and database tog, points the settings file at them, and changes nothing else", async () => {
        const { dir, script, infraDir } = newCase();
        const databases = asPostgres("select datname from pg_database order by 1");
        const roles = asPostgres("select rolname from pg_roles order by 1");
        const env = {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: dir,
          PGHOST: socketDir,
          TOG_INFRA_DIR: infraDir,
          TEST_DATABASE_ADMIN_URL: `postgresql://postgres@127.0.0.1:${port}/postgres`,
          REDIS_URL: ELSEWHERE.REDIS_URL,
          NATS_URL: ELSEWHERE.NATS_URL,
        };
        const url = `postgresql://tog:tog@127.0.0.1:${port}/tog`;
        // Twice: the second run finds role and database there and does the same.
        for (const attempt of [1, 2]) {
          const run = await runScript(script, env);
          expect(run.code, `run ${attempt}: ${run.stderr}`).toBe(0);
          expect(run.lines).toEqual([
            "[ensure-infra] postgres@127.0.0.1 needs a password here; using role and database tog instead",
            `[ensure-infra] port ${port} answers`,
          ]);
          expect(readFileSync(`${infraDir}.env`, "utf8")).toBe(`DATABASE_URL=${url}\nTEST_DATABASE_ADMIN_URL=${url}\n`);
        }

        const who = execFileSync(
          PSQL!,
          [
            "-X",
            url,
            "-Atc",
            "select current_user, current_database(), (select rolcreatedb from pg_roles where rolname = current_user)",
          ],
          { env: { PATH: process.env.PATH ?? "", HOME: dir } },
        );
        expect(who.toString().trim()).toBe("tog|tog|t");
        expect(asPostgres("select datname from pg_database order by 1")).toEqual([...databases, "tog"].sort());
        expect(asPostgres("select rolname from pg_roles order by 1")).toEqual([...roles, "tog"].sort());
        expect(readFileSync(path.join(base, "data/pg_hba.conf"), "utf8")).toBe(hba);
      });
    },
  );
});
