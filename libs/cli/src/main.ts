import { runCli } from "./program.ts";

process.exitCode = await runCli(process.argv.slice(2));
