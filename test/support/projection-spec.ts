import type { KnownEvent } from "@webhook-backend/stream/events/schemas";
import type { ItemKey, Projection, ProjectionInput } from "@webhook-backend/stream/projections/types";
import { expect } from "vitest";

/**
 * An Emmett-style specification of a projection, for one item:
 *
 *   spec(groupsProjection).given(created, deleted).when(lateUpdate, { times: 2 }).then({ deleted: true })
 *
 * `then` checks the state the events leave, and that the events applied in the reverse order
 * leave the same state (the projections are order-independent). The item is the first key the
 * `when` event touches, or `key`.
 */
export function spec<S extends { pk: string }, E extends KnownEvent>(
  projection: Projection<S, E>,
  key?: ItemKey,
) {
  const narrow = (input: ProjectionInput): ProjectionInput<E> => {
    if (!projection.handles(input.event))
      throw new Error(`${projection.name} does not handle ${input.event.trigger}`);
    return input as ProjectionInput<E>;
  };
  const fold = (inputs: readonly ProjectionInput[], item: ItemKey) =>
    inputs.reduce<S | null>((state, input) => projection.evolve(state, narrow(input), item), null);
  return {
    given(...given: ProjectionInput[]) {
      return {
        when(input: ProjectionInput, options: { times?: number } = {}) {
          const inputs = [...given, ...Array.from({ length: options.times ?? 1 }, () => input)];
          const item = key ?? projection.keys(narrow(input))[0];
          if (!item) throw new Error(`${input.event.trigger} touches no ${projection.name} item`);
          const state = fold(inputs, item);
          return {
            state,
            /** Asserts the state (a subset of its fields), and the same state in the reverse order. */
            // biome-ignore lint/suspicious/noThenProperty: Emmett's given/when/then vocabulary; this object is never awaited.
            then(expected: Partial<S>): S {
              expect(state).toMatchObject(expected);
              expect(fold([...inputs].reverse(), item)).toEqual(state);
              return state as S;
            },
          };
        },
      };
    },
  };
}
