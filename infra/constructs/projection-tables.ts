import { PROJECTION_TABLE_NAMES, type ProjectionTableName } from "@webhook-backend/stream/projections/keys";
import { EXPIRES_AT } from "@webhook-backend/stream/projections/registry";
import { RemovalPolicy } from "aws-cdk-lib";
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { Construct } from "constructs";
import {
  byTable,
  type KeyAttribute,
  PROJECTION_TABLES,
  type ProjectionTableId,
  TABLE_DEFINITIONS,
  type TableDefinition,
  type TableNames,
} from "../../shared/platform/tables";

const TYPES = { S: AttributeType.STRING, N: AttributeType.NUMBER } as const;
const key = (k: KeyAttribute) => ({ name: k.name, type: TYPES[k.type] });

/**
 * A table from its declaration (`shared/platform/tables.ts`: its keys), with the defaults every
 * table of the stack has: point-in-time recovery, encrypted, retained when the stack is deleted;
 * on demand unless `capacity` gives provisioned units; DynamoDB TTL on `timeToLiveAttribute` if given.
 *
 * @example declaredTable(this, "Activity", ACTIVITY_TABLE)
 */
export function declaredTable(
  scope: Construct,
  id: string,
  definition: TableDefinition,
  capacity: { readCapacity?: number; writeCapacity?: number } = {},
  timeToLiveAttribute?: string,
): Table {
  return new Table(scope, id, {
    timeToLiveAttribute,
    partitionKey: key(definition.partitionKey),
    sortKey: definition.sortKey ? key(definition.sortKey) : undefined,
    billingMode: capacity.writeCapacity === undefined ? BillingMode.PAY_PER_REQUEST : BillingMode.PROVISIONED,
    ...capacity,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    encryption: TableEncryption.AWS_MANAGED,
    removalPolicy: RemovalPolicy.RETAIN,
  });
}

/** Provisioned capacity, auto scaled: the same bounds for every table and every index. */
export interface ProvisionedCapacity {
  readonly mode: "provisioned";
  /** Consumed / provisioned units that auto scaling keeps (20-90). @default 70 */
  readonly targetPercent: number;
  /** Write units of each table and index, the minimum also its initial value. @default 1 to 1000 */
  readonly minWriteUnits: number;
  readonly maxWriteUnits: number;
  /** Read units of each table and index. @default 1 to 1000 */
  readonly minReadUnits: number;
  readonly maxReadUnits: number;
  /**
   * The units each table and index starts with (at creation, or a switch from on demand), until
   * auto scaling moves them: a live switch starting at the minimum throttles for the minutes
   * scaling takes to follow. @default the minimum
   */
  readonly initialWriteUnits?: number;
  readonly initialReadUnits?: number;
}

export type TableCapacity = { readonly mode: "on-demand" } | ProvisionedCapacity;

/**
 * The provisioned-mode defaults. A minimum of one unit is what the AWS console proposes: an idle
 * index (recordings, calls received) costs ~$0.57 a month, and DynamoDB's burst capacity (up to
 * five minutes of unused units) absorbs a short jump while scaling follows. Target 70%: the
 * console's default, room for a ~40% jump before throttling.
 */
export const CAPACITY_DEFAULTS = {
  targetPercent: 70,
  minWriteUnits: 1,
  maxWriteUnits: 1000,
  minReadUnits: 1,
  maxReadUnits: 1000,
} as const;

export interface ProjectionTablesProps {
  /** How the tables and their indexes buy capacity. @default on-demand */
  readonly capacity?: TableCapacity;
  /**
   * The tables whose closed items expire (DynamoDB TTL on `expiresAt`, which the projector sets:
   * `shared/projector/expiry.ts`). @default none
   */
  readonly expiring?: readonly ProjectionTableName[];
}

/**
 * Target-tracking auto scaling of a table's and each of its indexes' read and write units (an
 * index has capacity of its own: a write that changes its key consumes the index's units, and an
 * index short of units throttles the table's writes).
 */
function autoScale(table: Table, definition: TableDefinition, capacity: ProvisionedCapacity): void {
  const targetUtilizationPercent = capacity.targetPercent;
  const reads = { minCapacity: capacity.minReadUnits, maxCapacity: capacity.maxReadUnits };
  const writes = { minCapacity: capacity.minWriteUnits, maxCapacity: capacity.maxWriteUnits };
  table.autoScaleReadCapacity(reads).scaleOnUtilization({ targetUtilizationPercent });
  table.autoScaleWriteCapacity(writes).scaleOnUtilization({ targetUtilizationPercent });
  for (const index of definition.indexes) {
    table
      .autoScaleGlobalSecondaryIndexReadCapacity(index.name, reads)
      .scaleOnUtilization({ targetUtilizationPercent });
    table
      .autoScaleGlobalSecondaryIndexWriteCapacity(index.name, writes)
      .scaleOnUtilization({ targetUtilizationPercent });
  }
}

/**
 * The projection tables, from the same declarations the local stack uses (`PROJECTION_TABLES`): on-demand by default
 * (or provisioned with auto scaling per table and per index), point-in-time recovery, encrypted,
 * retained when the stack is deleted.
 */
export class ProjectionTables extends Construct {
  public readonly tables: Record<ProjectionTableId, Table>;

  constructor(scope: Construct, id: string, props: ProjectionTablesProps = {}) {
    super(scope, id);
    const capacity = props.capacity ?? { mode: "on-demand" };
    const provisioned = capacity.mode === "provisioned" ? capacity : undefined;
    // Start at the initial units (the minimum unless given): auto scaling moves them within
    // minutes of traffic away from the target.
    const units = provisioned
      ? {
          readCapacity: provisioned.initialReadUnits ?? provisioned.minReadUnits,
          writeCapacity: provisioned.initialWriteUnits ?? provisioned.minWriteUnits,
        }
      : {};
    const tables: Partial<Record<ProjectionTableId, Table>> = {};
    for (const name of PROJECTION_TABLE_NAMES) {
      const definition = PROJECTION_TABLES[name];
      const ttl = props.expiring?.includes(name) ? EXPIRES_AT : undefined;
      const table = declaredTable(this, definition.id, definition, units, ttl);
      for (const index of definition.indexes) {
        table.addGlobalSecondaryIndex({
          indexName: index.name,
          partitionKey: key(index.partitionKey),
          sortKey: index.sortKey ? key(index.sortKey) : undefined,
          // Keys only: a write that changes no key writes no index copy (see shared/platform/tables.ts).
          projectionType: ProjectionType.KEYS_ONLY,
          ...units,
        });
      }
      if (provisioned) autoScale(table, definition, provisioned);
      tables[definition.id] = table;
    }
    this.tables = tables as Record<ProjectionTableId, Table>;
  }

  /**
   * Grants what the item stores use, `GetItem`, `BatchGetItem` and `PutItem`, on the given tables (every one by
   * default): no Query, Scan, Delete or index access.
   */
  grantItemReadWrite(
    grantee: IFunction,
    ids: ProjectionTableId[] = TABLE_DEFINITIONS.map((d) => d.id),
    { batchReads = true }: { batchReads?: boolean } = {},
  ): void {
    grantee.addToRolePolicy(
      new PolicyStatement({
        actions: ["dynamodb:GetItem", ...(batchReads ? ["dynamodb:BatchGetItem"] : []), "dynamodb:PutItem"],
        resources: ids.map((id) => this.tables[id].tableArn),
      }),
    );
  }

  /** The environment's table names. */
  get names(): TableNames {
    return byTable((_, definition) => this.tables[definition.id].tableName);
  }
}
