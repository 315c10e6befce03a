// A module resolve hook (node:module `register`) that adds the "@webhook-backend/source" export
// condition (infra/conditions.ts), as `node --conditions=@webhook-backend/source` would: bin/webhook.mjs runs in the process
// npx started, whose flags it does not choose. The workspace's packages then load from their
// TypeScript sources through tsx, as in every other tool of this repository.
const SOURCE_CONDITION = "@webhook-backend/source";

export async function resolve(specifier, context, nextResolve) {
  const conditions = context.conditions ?? [];
  return nextResolve(
    specifier,
    conditions.includes(SOURCE_CONDITION)
      ? context
      : { ...context, conditions: [...conditions, SOURCE_CONDITION] },
  );
}
