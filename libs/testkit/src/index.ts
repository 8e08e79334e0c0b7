export { testInfraConfig, testInfraConfigShape, uniqueId } from "./infra.ts";
export { createTestDatabase, type TestDatabase } from "./database.ts";
export { openTestBus, provisionTestBus, deleteStreamsOf } from "./bus.ts";
