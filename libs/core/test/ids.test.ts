import { describe, expect, it } from "vitest";
import { isUuid, newId } from "../src/index.ts";

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

describe("newId", () => {
  it("makes lower-case version 7 UUIDs that carry the time they were made", () => {
    const before = Date.now();
    const id = newId();
    const after = Date.now();
    expect(isUuid(id)).toBe(true);
    expect(id).toBe(id.toLowerCase());
    expect(id[14]).toBe("7");
    expect("89ab").toContain(id[19]);
    const ms = Number.parseInt(id.replaceAll("-", "").slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after);
  });

  it("sorts ids made later after earlier ones, within one millisecond too", () => {
    const ids = Array.from({ length: 2_000 }, () => newId());
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});
