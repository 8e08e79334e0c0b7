export { testInfraConfig, testInfraConfigShape, uniqueId } from "./infra.ts";
export { createTestDatabase, type TestDatabase, untilPostgresAnswers, withDatabase } from "./database.ts";
export { openTestBus, provisionTestBus, deleteStreamsOf, eventTextsOnBus, messagesOnBus } from "./bus.ts";
export { ACCEPTED_LINT_WARNINGS, lintOpenApi, type LintProblem } from "./openapi-lint.ts";
export { call, type CallOptions, type CallResult } from "./http.ts";
export { createTestUser, type TestUser } from "./users.ts";
