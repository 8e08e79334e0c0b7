import { describe, expect, it } from "vitest";
import { ValidationError } from "@tog/core";
import { fails, ok } from "./helpers.ts";

const calc = async (expression: string, precision?: number) =>
  (await ok("calculator", precision === undefined ? { expression } : { expression, precision })).result as string;

describe("calculator", () => {
  it.each([
    ["2 + 3 * 4", "14"],
    ["(2 + 3) * 4", "20"],
    ["2 ^ 3 ^ 2", "512"], // right-associative
    ["-2 ^ 2", "-4"], // power binds tighter than unary minus
    ["10 - 4 - 3", "3"],
    ["100 / 10 / 5", "2"],
    ["10 % 3", "1"],
    ["50%", "0.5"],
    ["5!", "120"],
    ["2 pi", "6.28318530717959"],
    ["0.1 + 0.2", "0.3"], // decimal arithmetic, not binary floating point
    ["1 / 3", "0.333333333333333"],
  ])("precedence and operators: %s = %s", async (expression, expected) => {
    expect(await calc(expression)).toBe(expected);
  });

  it.each([
    ["sqrt(16)", "4"],
    ["sqrt(2)", "1.4142135623731"],
    ["sin(pi / 2)", "1"],
    ["cos(pi)", "-1"],
    ["log(100, 10)", "2"],
    ["log(e)", "1"],
    ["log10(1000)", "3"],
    ["round(2.567, 2)", "2.57"],
    ["round(2.5)", "3"],
    ["floor(-2.5)", "-3"],
    ["abs(-7)", "7"],
    ["max(1, 5, 3)", "5"],
    ["gcd(12, 18)", "6"],
    ["factorial(20)", "2.43290200817664e+18"],
    ["atan2(1, 1) * 4", "3.14159265358979"],
    ["combinations(5, 2)", "10"],
    ["permutations(5, 2)", "20"],
    ["mean(1, 2, 3, 4)", "2.5"],
    ["hypot(3, 4)", "5"],
    ["nthRoot(27, 3)", "3"],
  ])("functions and constants: %s = %s", async (expression, expected) => {
    expect(await calc(expression)).toBe(expected);
  });

  it("formats big results deterministically and reports a JS number only when it fits", async () => {
    expect(await ok("calculator", { expression: "2^64" })).toEqual({
      expression: "2^64",
      result: "1.84467440737096e+19",
      // biome-ignore lint/correctness/noPrecisionLoss: a number past 2^53 is what this case checks
      number: 18446744073709551616,
    });
    expect(await calc("2^64", 20)).toBe("18446744073709551616");
    expect(await calc("123456789012345")).toBe("123456789012345");
    expect(await calc("2^100")).toBe("1.26765060022823e+30");
    expect(await calc("2^100", 64)).toBe("1267650600228229401496703205376");
    expect(await calc("1/3", 40)).toBe("0.3333333333333333333333333333333333333333");
    const huge = await ok("calculator", { expression: "9^9^9" });
    expect(huge.result).toBe("4.28124773175747e+369693099");
    expect(huge.number).toBeNull();
  });

  it.each([
    ["1 / 0", "Division by zero"],
    ["(1 / 0) / 2", "Division by zero"],
    ["0 / 0", "Division by zero"],
    ["5 % 0", "Modulo by zero"],
    ["mod(5, 0)", "Modulo by zero"],
    ["sqrt(-1)", "not a real number"],
    ["log(-1)", "not a real number"],
    ["10 ^ 10 ^ 20", "too large"],
    ["factorial(1001)", "factorial is limited to n <= 1000"],
    ["1001!", "factorial is limited to n <= 1000"],
    ["combinations(1000000, 500000)", "combinations is limited to n <= 10000"],
    ["permutations(1000000, 500000)", "permutations is limited to n <= 10000"],
    ["1 +", "Syntax error"],
    ["2 * (3", "Syntax error"],
    ["foo + 1", 'Unknown symbol "foo"'],
  ])("reports %s clearly", async (expression, message) => {
    const failure = await fails("calculator", { expression });
    expect(failure.errorType).toBe("INVALID_INPUT");
    expect(failure.error).toBeInstanceOf(ValidationError);
    expect(failure.error.message).toContain(message);
  });

  it.each([
    ["import({pi: 3}, {override: true})", 'Function "import" is not allowed'],
    ['evaluate("1 + 1")', 'Function "evaluate" is not allowed'],
    ['parse("1 + 1")', 'Function "parse" is not allowed'],
    ['compile("1")', 'Function "compile" is not allowed'],
    ['createUnit("foo")', 'Function "createUnit" is not allowed'],
    ['simplify("x + x")', 'Function "simplify" is not allowed'],
    ["x = 3", "Assignment is not allowed"],
    ["(x = 3) / 2", "Assignment is not allowed"],
    ["f(x) = x ^ 2", "Function definition is not allowed"],
    ["1; 2", "More than one expression is not allowed"],
    ["[1, 2, 3]", "A matrix or range is not allowed"],
    ["1:3", "A matrix or range is not allowed"],
    ["{a: 1}", "An object is not allowed"],
    ["cos.constructor", "Property or index access is not allowed"],
    ['sqrt["constructor"]', "Property or index access is not allowed"],
    ["2 inch to cm", 'Operator "to" is not allowed'],
    ["2 == 2", 'Operator "==" is not allowed'],
  ])("refuses the unsafe or unsupported construct %s", async (expression, message) => {
    const failure = await fails("calculator", { expression });
    expect(failure.errorType).toBe("INVALID_INPUT");
    expect(failure.error.message).toContain(message);
  });

  it("refuses very long, deeply nested and very large expressions", async () => {
    const long = await fails("calculator", { expression: `${"1+".repeat(600)}1` });
    expect(long.error.message).toContain('Invalid arguments for tool "calculator": expression:');
    const nested = await fails("calculator", { expression: `${"(".repeat(60)}1${")".repeat(60)}` });
    expect(nested.error.message).toContain("nested too deeply");
    const complex = await fails("calculator", { expression: `${"1+".repeat(400)}1` });
    expect(complex.error.message).toContain("too complex");
  });

  it("keeps a huge exponent fast", async () => {
    const started = performance.now();
    expect(await calc("2^(2^40)")).toMatch(/e\+/);
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it("returns a short text form next to the data", async () => {
    const { registryFor } = await import("./helpers.ts");
    const outcome = await registryFor().invoke("calculator", { expression: "6 * 7" });
    expect(outcome.ok && outcome.result.text).toBe("6 * 7 = 42");
  });
});
