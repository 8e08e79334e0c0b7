import { envBoolean, loadConfig } from "@tog/core";

/** What the deployment checks read from the environment. */
export const deployTestsConfigShape = {
  CI: envBoolean(false).describe(
    "Set by CI: a deployment check whose tool (kubectl, docker-compose, nginx) is missing fails instead of being skipped.",
  ),
};

export const deployTestsConfig = loadConfig(deployTestsConfigShape, process.env);
