export { testInfraConfig, testInfraConfigShape, uniqueId } from "./infra.ts";
export { createTestDatabase, type TestDatabase } from "./database.ts";
export { openTestBus, provisionTestBus, deleteStreamsOf } from "./bus.ts";
export { ACCEPTED_LINT_WARNINGS, lintOpenApi, type LintProblem } from "./openapi-lint.ts";
