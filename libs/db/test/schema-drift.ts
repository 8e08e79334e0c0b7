import { readFile } from "node:fs/promises";
import wasm from "@prisma/prisma-schema-wasm";
import type pg from "pg";
import { SCHEMA_PATH } from "@tog/db";

// What schema.prisma says the database must look like, and what a migrated database really
// looks like, both reduced to the same plain shape so a test can compare them. Prisma's own
// `migrate diff` needs the schema engine (not installable offline); the DMMF comes from
// Prisma's schema WASM instead, and the database side from the PostgreSQL catalogs.

export interface ColumnShape {
  type: string;
  nullable: boolean;
  hasDefault: boolean;
}

export interface TableShape {
  columns: Record<string, ColumnShape>;
  primaryKey: string[];
  /** Sorted descriptions, e.g. `unique(email)`, `index(user_id)`. */
  indexes: string[];
  /** Sorted descriptions, e.g. `(user_id) -> users(id) on delete CASCADE`. */
  foreignKeys: string[];
}

export type DatabaseShape = Record<string, TableShape>;

interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: "scalar" | "object" | "enum" | "unsupported";
  isList: boolean;
  isRequired: boolean;
  isUnique: boolean;
  isId: boolean;
  isUpdatedAt: boolean;
  hasDefaultValue: boolean;
  type: string;
  nativeType?: [string, string[]] | null;
  default?: { name: string; args: unknown[] } | string | number | boolean | unknown[];
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
}
interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
  primaryKey: { fields: string[] } | null;
}
interface DmmfIndex {
  model: string;
  type: "id" | "unique" | "normal" | "fulltext";
  dbName?: string | null;
  fields: { name: string }[];
}
interface Dmmf {
  datamodel: { models: DmmfModel[]; enums: { name: string; dbName?: string | null }[]; indexes: DmmfIndex[] };
}

const SCALAR_TYPES: Record<string, string> = {
  String: "text",
  Int: "integer",
  BigInt: "bigint",
  Float: "double precision",
  Decimal: "numeric(65,30)",
  Boolean: "boolean",
  DateTime: "timestamp(3) without time zone",
  Json: "jsonb",
  Bytes: "bytea",
};

function nativeTypeName([name, args]: [string, string[]]): string {
  const a = args.length ? `(${args.join(",")})` : "";
  switch (name) {
    case "Uuid":
      return "uuid";
    case "Text":
      return "text";
    case "VarChar":
      return `character varying${a}`;
    case "Char":
      return `character${a}`;
    case "Timestamptz":
      return `timestamp${a || "(6)"} with time zone`;
    case "Timestamp":
      return `timestamp${a || "(6)"} without time zone`;
    case "Date":
      return "date";
    case "Integer":
      return "integer";
    case "SmallInt":
      return "smallint";
    case "BigInt":
      return "bigint";
    case "DoublePrecision":
      return "double precision";
    case "Real":
      return "real";
    case "Decimal":
      return `numeric${a}`;
    case "Boolean":
      return "boolean";
    case "JsonB":
      return "jsonb";
    case "Json":
      return "json";
    case "ByteA":
      return "bytea";
    case "Inet":
      return "inet";
    default:
      throw new Error(`schema-drift: native type @db.${name} is not mapped yet; add it here`);
  }
}

// Defaults Prisma evaluates in the client: no DB default.
const CLIENT_DEFAULTS = new Set(["uuid", "cuid", "nanoid", "ulid"]);

export async function expectedShape(): Promise<DatabaseShape> {
  const schema = await readFile(SCHEMA_PATH, "utf8");
  const dmmf = JSON.parse(wasm.get_dmmf(JSON.stringify({ prismaSchema: schema }))) as Dmmf;
  const models = new Map(dmmf.datamodel.models.map((m) => [m.name, m]));
  const enumNames = new Map(dmmf.datamodel.enums.map((e) => [e.name, e.dbName ?? e.name]));
  const table = (m: DmmfModel) => m.dbName ?? m.name;
  const column = (m: DmmfModel, field: string) => {
    const f = m.fields.find((x) => x.name === field);
    if (!f) throw new Error(`schema-drift: ${m.name}.${field} not found`);
    return f.dbName ?? f.name;
  };

  const shape: DatabaseShape = {};
  for (const m of dmmf.datamodel.models) {
    const t: TableShape = { columns: {}, primaryKey: [], indexes: [], foreignKeys: [] };
    for (const f of m.fields) {
      if (f.kind === "object") {
        if (f.relationFromFields?.length) {
          const target = models.get(f.type)!;
          const from = f.relationFromFields.map((x) => column(m, x)).join(", ");
          const to = (f.relationToFields ?? []).map((x) => column(target, x)).join(", ");
          t.foreignKeys.push(
            `(${from}) -> ${table(target)}(${to}) on delete ${(f.relationOnDelete ?? (f.isRequired ? "Restrict" : "SetNull")).toUpperCase()}`,
          );
        }
        continue;
      }
      let type: string;
      if (f.kind === "enum") type = `"${enumNames.get(f.type)}"`;
      else if (f.nativeType) type = nativeTypeName(f.nativeType);
      else type = SCALAR_TYPES[f.type] ?? "?";
      if (f.isList) type = `${type}[]`;
      const def = f.default;
      const clientSide =
        typeof def === "object" && def !== null && !Array.isArray(def) && CLIENT_DEFAULTS.has(def.name);
      t.columns[f.dbName ?? f.name] = {
        type,
        nullable: !f.isRequired,
        hasDefault: f.hasDefaultValue && !clientSide,
      };
    }
    for (const idx of dmmf.datamodel.indexes.filter((i) => i.model === m.name)) {
      const cols = idx.fields.map((x) => column(m, x.name));
      if (idx.type === "id") t.primaryKey = cols;
      else t.indexes.push(`${idx.type === "unique" ? "unique" : "index"}(${cols.join(", ")})`);
    }
    t.indexes.sort();
    t.foreignKeys.sort();
    shape[table(m)] = t;
  }
  return shape;
}

const ON_DELETE: Record<string, string> = { a: "NOACTION", r: "RESTRICT", c: "CASCADE", n: "SETNULL", d: "SETDEFAULT" };

export async function actualShape(client: pg.Client, schema = "public"): Promise<DatabaseShape> {
  const shape: DatabaseShape = {};
  const tables = await client.query<{ relname: string; oid: number }>(
    `SELECT c.relname, c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND c.relname <> '_prisma_migrations'`,
    [schema],
  );
  for (const { relname, oid } of tables.rows) {
    const t: TableShape = { columns: {}, primaryKey: [], indexes: [], foreignKeys: [] };
    const cols = await client.query<{
      attname: string;
      type: string;
      notnull: boolean;
      hasdef: boolean;
      attnum: number;
    }>(
      `SELECT a.attname, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull, a.atthasdef AS hasdef, a.attnum
       FROM pg_attribute a WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped`,
      [oid],
    );
    const byNum = new Map(cols.rows.map((c) => [c.attnum, c.attname]));
    for (const c of cols.rows) {
      const type = c.type.replace(/^USER-DEFINED$/, "?");
      t.columns[c.attname] = { type: /^[a-z]/.test(type) ? type : type, nullable: !c.notnull, hasDefault: c.hasdef };
    }
    const idx = await client.query<{ indisunique: boolean; indisprimary: boolean; indkey: string }>(
      `SELECT indisunique, indisprimary, indkey::text FROM pg_index WHERE indrelid = $1`,
      [oid],
    );
    for (const i of idx.rows) {
      const names = i.indkey.split(" ").map((n) => byNum.get(Number(n)) ?? `#${n}`);
      if (i.indisprimary) t.primaryKey = names;
      else t.indexes.push(`${i.indisunique ? "unique" : "index"}(${names.join(", ")})`);
    }
    const fks = await client.query<{
      conkey: number[];
      confkey: number[];
      target: string;
      target_oid: number;
      confdeltype: string;
    }>(
      `SELECT conkey, confkey, confrelid::regclass::text AS target, confrelid AS target_oid, confdeltype
       FROM pg_constraint WHERE conrelid = $1 AND contype = 'f'`,
      [oid],
    );
    for (const fk of fks.rows) {
      const targetCols = await client.query<{ attnum: number; attname: string }>(
        `SELECT attnum, attname FROM pg_attribute WHERE attrelid = $1 AND attnum > 0`,
        [fk.target_oid],
      );
      const tmap = new Map(targetCols.rows.map((c) => [c.attnum, c.attname]));
      const from = fk.conkey.map((n) => byNum.get(n)).join(", ");
      const to = fk.confkey.map((n) => tmap.get(n)).join(", ");
      t.foreignKeys.push(
        `(${from}) -> ${fk.target.replace(/"/g, "")}(${to}) on delete ${ON_DELETE[fk.confdeltype] ?? fk.confdeltype}`,
      );
    }
    t.indexes.sort();
    t.foreignKeys.sort();
    shape[relname] = t;
  }
  return shape;
}
