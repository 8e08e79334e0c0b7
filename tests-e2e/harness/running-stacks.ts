import type { Stack } from "@tog/devstack";

/** The stacks of this test file's environments that are up (failure-logs.ts prints their logs). */
export const runningStacks = new Set<Stack>();
