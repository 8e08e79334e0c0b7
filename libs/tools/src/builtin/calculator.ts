import { createRequire } from "node:module";
import type { BigNumber, ConfigOptions, MathJsInstance, MathNode } from "mathjs";
import { z } from "zod";
import { ValidationError } from "@tog/core";
import { defineTool } from "../tool.ts";

// mathjs with BigNumber (64 significant digits): 0.1 + 0.2 is exactly 0.3 and results format the
// same way on every machine. Safety does not rely on mathjs's deny-list alone: every expression is
// parsed, and the tree may only hold numbers, the constants and functions listed here, and
// arithmetic operators. Assignments, function definitions, objects, matrices, ranges, units,
// property access and `;` blocks are refused before anything is evaluated.

const MAX_EXPRESSION_LENGTH = 1_000;
const MAX_NESTING = 40; // mathjs parses recursively: deep parentheses would overflow the stack
const MAX_NODES = 300;
const MAX_FACTORIAL = 1_000; // factorial(n) costs O(n) BigNumber multiplications
const MAX_COMBINATORICS = 10_000; // combinations/permutations cost O(k)

// mathjs's single-file build (an exported entry point of the package) loads in ~0.1 s where the
// module build takes ~1.4 s to resolve its ~1,000 files: that is start-up time of every worker.
// Every mathjs instance has `create(config)`, bound to the factories it was made from.
const mathjsBundle = createRequire(import.meta.url)("mathjs/lib/browser/math.js") as {
  create(config: ConfigOptions): MathJsInstance;
};
const math = mathjsBundle.create({ number: "BigNumber", precision: 64, predictable: true });
const parse = math.parse;

const CONSTANTS = new Set(["pi", "PI", "e", "E", "tau", "phi"]);
const FUNCTIONS = new Set([
  "abs",
  "sqrt",
  "cbrt",
  "nthRoot",
  "exp",
  "log",
  "log10",
  "log2",
  "log1p",
  "expm1",
  "pow",
  "hypot",
  "sin",
  "cos",
  "tan",
  "asin",
  "acos",
  "atan",
  "atan2",
  "sinh",
  "cosh",
  "tanh",
  "asinh",
  "acosh",
  "atanh",
  "sec",
  "csc",
  "cot",
  "round",
  "floor",
  "ceil",
  "fix",
  "sign",
  "min",
  "max",
  "mod",
  "gcd",
  "lcm",
  "factorial",
  "combinations",
  "permutations",
  "mean",
  "median",
  "sum",
  "prod",
]);
// mathjs operator node `fn` names. `%` after a number (50%) is parsed as a division by 100.
const OPERATORS = new Set([
  "add",
  "subtract",
  "multiply",
  "divide",
  "mod",
  "pow",
  "unaryMinus",
  "unaryPlus",
  "factorial",
]);

function checkedDivide(a: BigNumber, b: BigNumber): BigNumber {
  if (math.isZero(b)) throw new ValidationError("Division by zero");
  return math.divide(a, b) as BigNumber;
}
function checkedMod(a: BigNumber, b: BigNumber): BigNumber {
  if (math.isZero(b)) throw new ValidationError("Modulo by zero");
  return math.mod(a, b);
}
function checkedFactorial(n: BigNumber): BigNumber {
  if (math.larger(n, MAX_FACTORIAL)) throw new ValidationError(`factorial is limited to n <= ${MAX_FACTORIAL}`);
  return math.factorial(n);
}
function checkedCombinations(n: BigNumber, k: BigNumber): BigNumber {
  if (math.larger(n, MAX_COMBINATORICS))
    throw new ValidationError(`combinations is limited to n <= ${MAX_COMBINATORICS}`);
  return math.combinations(n, k);
}
function checkedPermutations(n: BigNumber, k?: BigNumber): BigNumber {
  if (math.larger(n, MAX_COMBINATORICS))
    throw new ValidationError(`permutations is limited to n <= ${MAX_COMBINATORICS}`);
  return k === undefined ? math.permutations(n) : math.permutations(n, k);
}

math.import(
  { checkedDivide, checkedMod, checkedFactorial, checkedCombinations, checkedPermutations },
  { override: true },
);
// Hardening recommended by mathjs's security guide, in case a future mathjs version lets a
// construct through the allow-list below: the dangerous entry points throw.
const disabled = (name: string) => () => {
  throw new ValidationError(`Function ${name} is disabled`);
};
math.import(
  Object.fromEntries(
    [
      "import",
      "createUnit",
      "reviver",
      "evaluate",
      "parse",
      "compile",
      "simplify",
      "derivative",
      "resolve",
      "chain",
    ].map((name) => [name, disabled(name)]),
  ),
  { override: true },
);

/** Refuses anything not allowed and rewrites division, modulo and the costly functions to checked variants. */
function toSafeTree(root: MathNode): MathNode {
  let count = 0;
  const visit = (node: MathNode): MathNode => {
    if (++count > MAX_NODES) throw new ValidationError(`Expression is too complex (more than ${MAX_NODES} parts)`);
    check(node);
    // Children first (node.map is one level deep), so nested divisions are rewritten too.
    const mapped = node.map((child) => visit(child));
    if (math.isFunctionNode(mapped) && math.isSymbolNode(mapped.fn)) {
      const checked = CHECKED_FUNCTIONS.get(mapped.fn.name);
      if (checked) return new math.FunctionNode(checked, mapped.args);
    }
    if (math.isOperatorNode(mapped) && !(mapped.fn === "divide" && mapped.op !== "/")) {
      const checked = CHECKED_FUNCTIONS.get(mapped.fn);
      if (checked) return new math.FunctionNode(checked, mapped.args);
    }
    return mapped;
  };
  return visit(root);
}

const CHECKED_FUNCTIONS = new Map([
  ["divide", "checkedDivide"],
  ["mod", "checkedMod"],
  ["factorial", "checkedFactorial"],
  ["combinations", "checkedCombinations"],
  ["permutations", "checkedPermutations"],
]);

function check(node: MathNode): void {
  if (math.isConstantNode(node) || math.isParenthesisNode(node)) return;
  if (math.isSymbolNode(node)) {
    // A function's name is a SymbolNode too; calls are checked at their FunctionNode.
    if (CONSTANTS.has(node.name) || FUNCTIONS.has(node.name)) return;
    throw new ValidationError(`Unknown symbol "${node.name}". Allowed constants: ${[...CONSTANTS].join(", ")}`);
  }
  if (math.isFunctionNode(node)) {
    const name = math.isSymbolNode(node.fn) ? node.fn.name : undefined;
    if (name !== undefined && FUNCTIONS.has(name)) return;
    throw new ValidationError(`Function "${name ?? node.fn.toString()}" is not allowed`);
  }
  if (math.isOperatorNode(node)) {
    if (OPERATORS.has(node.fn)) return;
    throw new ValidationError(`Operator "${node.op}" is not allowed`);
  }
  throw new ValidationError(`${describeNode(node)} is not allowed in a calculation`);
}

function describeNode(node: MathNode): string {
  switch (node.type) {
    case "AssignmentNode":
      return "Assignment";
    case "FunctionAssignmentNode":
      return "Function definition";
    case "BlockNode":
      return "More than one expression";
    case "AccessorNode":
    case "IndexNode":
      return "Property or index access";
    case "ArrayNode":
    case "RangeNode":
      return "A matrix or range";
    case "ObjectNode":
      return "An object";
    default:
      return `"${node.toString()}"`;
  }
}

function maxNesting(expression: string): number {
  let depth = 0;
  let max = 0;
  for (const ch of expression) {
    if (ch === "(" || ch === "[" || ch === "{") max = Math.max(max, ++depth);
    else if (ch === ")" || ch === "]" || ch === "}") depth--;
  }
  return max;
}

export interface Calculation {
  expression: string;
  result: string;
  /** The result as a JS number when it fits one, else null (the string stays exact). */
  number: number | null;
}

export function calculate(expression: string, precision = 15): Calculation {
  const trimmed = expression.trim();
  if (trimmed === "") throw new ValidationError("Expression is empty");
  if (trimmed.length > MAX_EXPRESSION_LENGTH) {
    throw new ValidationError(
      `Expression is too long (${trimmed.length} characters, at most ${MAX_EXPRESSION_LENGTH})`,
    );
  }
  if (maxNesting(trimmed) > MAX_NESTING)
    throw new ValidationError(`Expression is nested too deeply (at most ${MAX_NESTING} levels)`);

  let tree: MathNode;
  try {
    tree = parse(trimmed);
  } catch (cause) {
    throw new ValidationError(`Syntax error: ${(cause as Error).message}`, { cause });
  }
  const safe = toSafeTree(tree);

  let value: unknown;
  try {
    value = safe.evaluate();
  } catch (cause) {
    if (cause instanceof ValidationError) throw cause;
    throw new ValidationError(`Cannot evaluate: ${(cause as Error).message}`, { cause });
  }
  if (!math.isBigNumber(value)) throw new ValidationError("The expression does not evaluate to a single number");
  if (value.isNaN())
    throw new ValidationError(
      "The result is not a real number (for example the root or logarithm of a negative number)",
    );
  if (!value.isFinite()) throw new ValidationError("The result is too large (overflow) or infinite");

  // Exponent notation as soon as the integer part has more digits than are shown, so a rounded
  // result never looks exact through padded zeros.
  const result = math.format(value, { precision, lowerExp: -9, upperExp: precision });
  const asNumber = value.toNumber();
  return { expression: trimmed, result, number: Number.isFinite(asNumber) ? asNumber : null };
}

export const calculatorTool = defineTool({
  name: "calculator",
  description:
    "Evaluates an arithmetic expression exactly (64-digit decimals). Supports + - * / ^ % ! and parentheses, " +
    "constants pi, e, tau, phi and functions such as sqrt, cbrt, exp, log(x[, base]), log10, sin, cos, tan, " +
    "atan2, round(x[, digits]), floor, ceil, abs, min, max, mod, gcd, lcm, factorial. " +
    "`50%` means 0.5; `a % b` is the remainder.",
  parameters: z
    .object({
      expression: z
        .string()
        .min(1)
        .max(MAX_EXPRESSION_LENGTH)
        .describe('The expression, e.g. "(2 + 3) * sqrt(16) / 4"'),
      precision: z
        .number()
        .int()
        .min(1)
        .max(64)
        .default(15)
        .describe("Significant digits of the formatted result (default 15)"),
    })
    .strict(),
  riskLevel: "low",
  timeoutSeconds: 5,
  async execute(args) {
    const calculation = calculate(args.expression, args.precision);
    return { data: { ...calculation }, text: `${calculation.expression} = ${calculation.result}` };
  },
});
