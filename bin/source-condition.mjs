// A module resolve hook (node:module `register`) that adds the "source" export condition
// (infra/conditions.ts), as `node --conditions=source` would: bin/webhook.mjs runs in the process
// npx started, whose flags it does not choose. The workspace's packages then load from their
// TypeScript sources through tsx, as in every other tool of this repository.
export async function resolve(specifier, context, nextResolve) {
  const conditions = context.conditions ?? [];
  return nextResolve(
    specifier,
    conditions.includes("source") ? context : { ...context, conditions: [...conditions, "source"] },
  );
}
