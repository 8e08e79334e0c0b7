import { describe, expect, it } from "vitest";
import { childEnv } from "../src/index.ts";

describe("childEnv", () => {
  it("passes the code cache's directory and the basics on, nothing else of the parent's", () => {
    const env = childEnv(
      { PORT: "1234", DROPPED: undefined },
      { PATH: "/bin", NODE_COMPILE_CACHE: "/cache", DATABASE_URL: "postgres://secret", HOME: "/home/x" },
    );
    expect(env).toEqual({ PATH: "/bin", HOME: "/home/x", NODE_COMPILE_CACHE: "/cache", PORT: "1234" });
  });
});
