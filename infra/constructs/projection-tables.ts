import { RemovalPolicy } from "aws-cdk-lib";
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { Construct } from "constructs";
import { type KeyAttribute, TABLE_DEFINITIONS, type TableDefinition } from "../../shared/platform/tables";

const TYPES = { S: AttributeType.STRING, N: AttributeType.NUMBER } as const;
const key = (k: KeyAttribute) => ({ name: k.name, type: TYPES[k.type] });

/**
 * The four projection tables, from the same definitions the local stack uses: on-demand,
 * point-in-time recovery, encrypted, retained when the stack is deleted.
 */
export class ProjectionTables extends Construct {
  public readonly tables: Record<TableDefinition["id"], Table>;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const tables: Partial<Record<TableDefinition["id"], Table>> = {};
    for (const definition of TABLE_DEFINITIONS) {
      const table = new Table(this, definition.id, {
        partitionKey: key(definition.partitionKey),
        sortKey: definition.sortKey ? key(definition.sortKey) : undefined,
        billingMode: BillingMode.PAY_PER_REQUEST,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        encryption: TableEncryption.AWS_MANAGED,
        removalPolicy: RemovalPolicy.RETAIN,
      });
      for (const index of definition.indexes) {
        table.addGlobalSecondaryIndex({
          indexName: index.name,
          partitionKey: key(index.partitionKey),
          sortKey: index.sortKey ? key(index.sortKey) : undefined,
          // Keys only: a write that changes no key writes no index copy (see shared/platform/tables.ts).
          projectionType: ProjectionType.KEYS_ONLY,
        });
      }
      tables[definition.id] = table;
    }
    this.tables = tables as Record<TableDefinition["id"], Table>;
  }

  /**
   * Grants what the item stores use, `GetItem`, `BatchGetItem` and `PutItem`, on the given tables (all four by
   * default): no Query, Scan, Delete or index access.
   */
  grantItemReadWrite(
    grantee: IFunction,
    ids: TableDefinition["id"][] = TABLE_DEFINITIONS.map((d) => d.id),
  ): void {
    grantee.addToRolePolicy(
      new PolicyStatement({
        actions: ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem"],
        resources: ids.map((id) => this.tables[id].tableArn),
      }),
    );
  }

  /** The environment's table names. */
  get names() {
    return {
      groups: this.tables.Groups.tableName,
      memberships: this.tables.Memberships.tableName,
      presence: this.tables.Presence.tableName,
      sessions: this.tables.Sessions.tableName,
    };
  }
}
