import { describe, expect, it } from "vitest";
import { isUuid } from "../src/index.ts";

describe("isUuid", () => {
  it("accepts a UUID of any version in any case", () => {
    expect(isUuid("7d0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3d")).toBe(true);
    expect(isUuid("7D0C2F3E-5B7A-1C1E-0A55-0D6F0F1B2C3D")).toBe(true);
  });

  it("refuses anything else, including a UUID with surrounding text", () => {
    for (const v of [
      "",
      "nope",
      "7d0c2f3e5b7a4c1e9a550d6f0f1b2c3d",
      " 7d0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3d",
      "7d0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3d\n",
      "7d0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3g",
    ]) {
      expect(isUuid(v), JSON.stringify(v)).toBe(false);
    }
  });
});
