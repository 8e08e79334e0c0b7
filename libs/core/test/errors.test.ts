import { describe, expect, it } from "vitest";
import {
  AppError,
  ForbiddenError,
  isAppError,
  NotFoundError,
  RateLimitedError,
  UnauthorizedError,
  ValidationError,
} from "../src/index.ts";

describe("named errors", () => {
  it("carry a stable code, their class name, the cause and body details", () => {
    const cause = new Error("socket hang up");
    const err = new ValidationError("Query is required", { cause, details: { field: "query" } });
    expect(err).toBeInstanceOf(AppError);
    expect(err.code).toBe("VALIDATION");
    expect(err.name).toBe("ValidationError");
    expect(err.cause).toBe(cause);
    expect(err.details).toEqual({ field: "query" });
    expect(isAppError(err)).toBe(true);
    expect(isAppError(cause)).toBe(false);
  });

  it("word the contract's fixed messages and put retry_after in the body", () => {
    expect(new UnauthorizedError().message).toBe("Unauthorized");
    expect(new ForbiddenError().message).toBe("Forbidden");
    expect(new NotFoundError("Task not found").code).toBe("NOT_FOUND");
    const limited = new RateLimitedError(7);
    expect(limited.message).toBe("Rate limit exceeded");
    expect(limited.retryAfterSeconds).toBe(7);
    expect(limited.details).toEqual({ retry_after: 7 });
  });
});
