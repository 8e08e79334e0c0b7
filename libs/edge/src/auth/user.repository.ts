import type { Db, User } from "@tog/db";
import { ConflictError, isUuid, NotFoundError } from "@tog/core";
import { DEFAULT_USER_ID, DEFAULT_USER_NAME } from "../principal.ts";

export interface UserRepositoryOptions {
  db: Db;
}

/** Users as far as authentication needs them: the default user and lookup by id, email or name. */
export class UserRepository {
  private readonly db: Db;

  constructor(options: UserRepositoryOptions) {
    this.db = options.db;
  }

  /** The user every request acts as while authentication is off; safe to call concurrently. */
  async ensureDefaultUser(): Promise<User> {
    // raw: Prisma's upsert is find-then-create here and races between processes; ON CONFLICT does not.
    await this.db
      .$executeRaw`INSERT INTO users (id, name) VALUES (${DEFAULT_USER_ID}::uuid, ${DEFAULT_USER_NAME}) ON CONFLICT (id) DO NOTHING`;
    return this.db.user.findUniqueOrThrow({ where: { id: DEFAULT_USER_ID } });
  }

  /** A user by id (UUID), email (contains `@`) or name; undefined when none, ConflictError when a name is ambiguous. */
  async find(ref: string): Promise<User | undefined> {
    if (isUuid(ref)) return (await this.db.user.findUnique({ where: { id: ref.toLowerCase() } })) ?? undefined;
    if (ref.includes("@")) return (await this.db.user.findUnique({ where: { email: ref.toLowerCase() } })) ?? undefined;
    const byName = await this.db.user.findMany({ where: { name: ref }, take: 2 });
    if (byName.length > 1) throw new ConflictError(`More than one user is named "${ref}"; use the id or email`);
    return byName[0];
  }

  async get(ref: string): Promise<User> {
    const user = await this.find(ref);
    if (!user) throw new NotFoundError(`No user "${ref}"`);
    return user;
  }

  /** Creates a user from a reference: an email becomes the email (name = its local part), anything else the name. */
  async createFromRef(ref: string): Promise<User> {
    if (ref === DEFAULT_USER_NAME || ref === DEFAULT_USER_ID) return this.ensureDefaultUser();
    if (isUuid(ref)) return this.db.user.create({ data: { id: ref.toLowerCase(), name: ref.toLowerCase() } });
    if (ref.includes("@")) {
      const email = ref.toLowerCase();
      return this.db.user.create({ data: { email, name: email.split("@")[0] || email } });
    }
    return this.db.user.create({ data: { name: ref } });
  }
}
