import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { PROJECTION_TABLE_NAMES } from "@webhook-backend/stream/projections/keys";
import { PROJECTIONS } from "@webhook-backend/stream/projections/registry";
import { describe, expect, it } from "vitest";
import { loadProjectorConfig } from "../../shared/config/function-config";
import { projectorEnvironment } from "../../shared/config/function-environment";
import { PROJECTION_TABLES, TABLE_DEFINITIONS, tableEnvVar, tableOutput } from "../../shared/platform/tables";
import { tableBindings } from "../../shared/projector/registry";
import { projectionStores } from "../../shared/projector/stores";
import { createTableInput, localTableNames } from "../../tools/local/provision";
import { dryRunStores } from "../../tools/ops/dry-run";
import { resolveTarget } from "../../tools/target";

// #28: a projection table is one declaration (PROJECTION_TABLES) plus its projection (PROJECTIONS).
// Each consumer below is asked for what it made, and must hold exactly the declared tables: a
// consumer that listed tables by hand would miss the next one added, and fail here.

const names = [...PROJECTION_TABLE_NAMES].sort();

describe("the projection tables' registry", () => {
  it("binds every declared table to a projection, and only those", () => {
    expect(Object.keys(PROJECTIONS).sort()).toEqual(names);
    expect(TABLE_DEFINITIONS).toEqual(PROJECTION_TABLE_NAMES.map((name) => PROJECTION_TABLES[name]));
  });

  it("keeps the names a deployed stack and its functions know the tables by", () => {
    // Changing these would replace deployed tables (logical ids) or strand deployed functions.
    expect(
      PROJECTION_TABLE_NAMES.map((name) => [
        name,
        PROJECTION_TABLES[name].id,
        tableEnvVar(name),
        tableOutput(name),
      ]),
    ).toEqual([
      ["groups", "Groups", "GROUPS_TABLE", "GroupsTable"],
      ["memberships", "Memberships", "MEMBERSHIPS_TABLE", "MembershipsTable"],
      ["presence", "Presence", "PRESENCE_TABLE", "PresenceTable"],
      ["sessions", "Sessions", "SESSIONS_TABLE", "SessionsTable"],
    ]);
  });

  it("reaches local provisioning: a name and a CreateTable input per table", () => {
    const local = localTableNames("t");
    expect(Object.keys(local).sort()).toEqual(names);
    for (const name of PROJECTION_TABLE_NAMES) {
      expect(local[name]).toBe(`t-${name}`);
      const input = createTableInput(PROJECTION_TABLES[name], local[name]);
      expect(input.KeySchema[0]?.AttributeName).toBe(PROJECTION_TABLES[name].partitionKey.name);
      expect((input.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName)).toEqual(
        PROJECTION_TABLES[name].indexes.map((i) => i.name),
      );
    }
  });

  it("reaches the projector's configuration: a variable per table, read back as its name", () => {
    const tables = localTableNames("cfg");
    const env = projectorEnvironment({ tables, dataBucket: "b", recordingsQueueUrl: "q" });
    for (const name of PROJECTION_TABLE_NAMES) expect(env[tableEnvVar(name)]).toBe(tables[name]);
    expect(loadProjectorConfig(env).tables).toEqual(tables);
  });

  it("reaches the stores, the dry run and the projector's fold: a store per table, with its projection", () => {
    const client = new DynamoDBClient({ region: "us-east-1" });
    const stores = projectionStores(client, localTableNames("s"));
    expect(Object.keys(stores).sort()).toEqual(names);
    expect(Object.keys(dryRunStores(stores)).sort()).toEqual(names);
    const bindings = tableBindings(stores);
    expect(bindings.map((b) => b.table)).toEqual(PROJECTION_TABLE_NAMES);
    for (const b of bindings) {
      expect(b.projection).toBe(PROJECTIONS[b.table]);
      expect(b.store).toBe(stores[b.table]);
    }
    client.destroy();
  });

  it("reaches the CLIs' --tables: every table must be named", async () => {
    const spec = PROJECTION_TABLE_NAMES.map((name) => `${name}=x-${name}`).join(",");
    const target = await resolveTarget({ tables: spec });
    target.destroy();
    expect(target.tables).toEqual(localTableNames("x"));
    const missing = PROJECTION_TABLE_NAMES.slice(1)
      .map((name) => `${name}=x`)
      .join(",");
    await expect(resolveTarget({ tables: missing })).rejects.toThrow(`${PROJECTION_TABLE_NAMES[0]}=…`);
  });
});
