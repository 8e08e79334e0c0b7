import { describe, expect, it } from "vitest";
import { isDependencyUnavailable } from "../src/index.ts";

describe("isDependencyUnavailable", () => {
  it.each([
    [
      "pg admin shutdown",
      Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }),
    ],
    ["pg starting up", Object.assign(new Error("the database system is starting up"), { code: "57P03" })],
    ["pg connection failure", Object.assign(new Error("x"), { code: "08006" })],
    ["refused socket", Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" })],
    ["cut mid-query", new Error("Connection terminated unexpectedly")],
    ["prisma unreachable", Object.assign(new Error("Can't reach database server"), { code: "P1001" })],
    [
      "prisma raw query, server gone",
      Object.assign(
        new Error("Raw query failed. Code: `N/A`. Message: `Can't reach database server at 127.0.0.1:5432`"),
        { code: "P2010" },
      ),
    ],
    [
      "prisma raw query, admin shutdown",
      Object.assign(new Error("Raw query failed. Code: `57P01`. Message: `terminating connection`"), { code: "P2010" }),
    ],
    ["wrapped in a cause", new Error("query failed", { cause: Object.assign(new Error("x"), { code: "57P01" }) })],
    ["inside an AggregateError", new AggregateError([Object.assign(new Error("x"), { code: "ECONNREFUSED" })])],
  ])("%s → unavailable", (_label, err) => {
    expect(isDependencyUnavailable(err)).toBe(true);
  });

  it.each([
    ["a bug", new TypeError("cannot read properties of undefined")],
    ["a constraint violation", Object.assign(new Error("duplicate key"), { code: "23505" })],
    [
      "a prisma raw query constraint",
      Object.assign(new Error("Raw query failed. Code: `23505`. Message: `duplicate key`"), { code: "P2010" }),
    ],
    ["a syntax error", Object.assign(new Error("syntax error"), { code: "42601" })],
    ["not an error", "ECONNREFUSED"],
  ])("%s → not unavailable", (_label, err) => {
    expect(isDependencyUnavailable(err)).toBe(false);
  });
});
