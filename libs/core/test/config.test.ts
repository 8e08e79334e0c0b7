import { z } from "zod";
import { describe, expect, it } from "vitest";
import { ConfigError, describeConfig, envBoolean, envInt, envList, loadConfig } from "../src/index.ts";

const shape = {
  PORT: envInt(8081, 0, 65_535).describe("Port."),
  DEBUG: envBoolean(false).describe("Debug."),
  ORIGINS: envList(["a"]).describe("Origins."),
  NAME: z.string().min(1).describe("Name."),
};

describe("loadConfig", () => {
  it("reads only the declared variables, coerces them and fills defaults", () => {
    expect(loadConfig(shape, { NAME: "x", PORT: "9000", DEBUG: "yes", ORIGINS: " b, ,c ", OTHER: "ignored" })).toEqual({
      NAME: "x",
      PORT: 9000,
      DEBUG: true,
      ORIGINS: ["b", "c"],
    });
    expect(loadConfig(shape, { NAME: "x", DEBUG: "" })).toEqual({
      NAME: "x",
      PORT: 8081,
      DEBUG: false,
      ORIGINS: ["a"],
    });
  });

  it("refuses bad values with one ConfigError naming every bad variable", () => {
    let error: unknown;
    try {
      loadConfig(shape, { PORT: "70000", DEBUG: "maybe" });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe("CONFIG");
    const message = (error as Error).message;
    for (const name of ["PORT", "DEBUG", "NAME"]) expect(message).toContain(`${name}:`);
  });
});

describe("describeConfig", () => {
  it("lists name, description and default (undefined when required)", () => {
    expect(describeConfig(shape)).toEqual([
      { name: "PORT", description: "Port.", default: "8081" },
      { name: "DEBUG", description: "Debug.", default: "false" },
      { name: "ORIGINS", description: "Origins.", default: '["a"]' },
      { name: "NAME", description: "Name.", default: undefined },
    ]);
  });
});
