import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (service entry files are resolved against it). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
