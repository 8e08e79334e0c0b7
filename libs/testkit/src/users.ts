import type { Db } from "@tog/db";
import { ApiKeyRepository, UserRepository } from "@tog/edge";
import { uniqueId } from "./infra.ts";

export interface TestUser {
  id: string;
  /** A fresh API key of the user (so each user has its own rate-limit budget). */
  key: string;
}

/** A new user with an API key, named after `label` and unique to this run. */
export async function createTestUser(db: Db, label: string): Promise<TestUser> {
  const user = await new UserRepository({ db }).createFromRef(`${uniqueId(label)}@example.com`);
  const { key } = await new ApiKeyRepository({ db }).create({ userId: user.id, name: label });
  return { id: user.id, key };
}
