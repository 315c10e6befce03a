import { describe, expect, it } from "vitest";
import { PERSON_FIELDS } from "../../shared/erasure/find-items";
import { GROUP_TRIGGERS } from "../../shared/events/accessors";
import { parseEventBody } from "../../shared/events/parse-body";
import { groupsProjection } from "../../shared/projections/groups";
import { membershipsProjection } from "../../shared/projections/memberships";
import type { Projection } from "../../shared/projections/types";
import { projectionInput, RUNNER_UPS_KEPT } from "../../shared/projector/core";
import { fixtureText } from "../support/fixtures";

/**
 * The erasure's filtered Scan (#40, item 2) looks for the user in the fields `PERSON_FIELDS`
 * names: a field a projection writes a uid into and the list forgets would hide the user from an
 * erasure once the archive has expired. Every group and membership fixture is projected, and each
 * field that comes out holding a uid must be listed, with its part's runner-up copy.
 */
describe("the erasure's sweep of groups and memberships", () => {
  const projections = { groups: groupsProjection, memberships: membershipsProjection } as unknown as Record<
    keyof typeof PERSON_FIELDS,
    Projection<{ pk: string }>
  >;

  it("names every field the projections write a uid into, and its runner-up copy", () => {
    const found = { groups: new Set<string>(), memberships: new Set<string>() };
    for (const trigger of GROUP_TRIGGERS) {
      const parsed = parseEventBody(fixtureText(trigger));
      if (parsed.kind !== "known") continue;
      const input = projectionInput(parsed.event, "e".repeat(64), 1_700_000_000_000);
      for (const table of ["groups", "memberships"] as const) {
        const projection = projections[table];
        if (!projection.handles(parsed.event)) continue;
        for (const key of projection.keys(input))
          for (const [field, value] of Object.entries(projection.evolve(null, input, key)))
            if (typeof value === "string" && /^cometchat-uid-\d+$/.test(value)) found[table].add(field);
      }
    }
    expect([...found.groups].sort()).toEqual(["deletedBy", "owner", "previousOwner", "updatedBy"]);
    for (const table of ["groups", "memberships"] as const)
      for (const field of found[table]) {
        const listed: readonly string[] = PERSON_FIELDS[table];
        expect(listed, `${table}.${field}`).toContain(field);
        const part = Object.entries(projections[table].parts ?? {}).find(([, fields]) =>
          fields.includes(field),
        );
        if (part)
          for (const i of Array.from({ length: RUNNER_UPS_KEPT }, (_, n) => n))
            expect(listed, `${table}: runner-up ${i} of ${field}`).toContain(
              `fallback.${part[0]}[${i}].f.${field}`,
            );
      }
  });
});
